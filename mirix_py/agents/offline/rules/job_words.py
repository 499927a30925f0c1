"""Nouns that name a job, from WordNet 3.0: every one-word noun under worker.n.01 or professional.n.01.

Written by scripts/build_job_words.py; do not edit by hand.

WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.
THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES,
EXPRESS OR IMPLIED.  BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR
WARRANTIES OF MERCHANTABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE,
DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS.
"""

WORDNET_JOB_WORDS = frozenset("""
    abbreviator abortionist abridger academic academician accoucheur accoucheuse adjutant admiral advocate aeronaut
    aesthetician aetiologist agent aide aide-de-camp aircraftman aircraftsman aircrewman airman airwoman alcalde
    alienist allergist almoner amah amanuensis ambassador ambassadress amputator anaesthetist analyst
    anesthesiologist anesthetist angiologist angler animator anthologist apothecary apparatchik appointee aquanaut
    armiger armor-bearer armorer armourer arrowsmith artificer artilleryman artisan assessor assistant astrogator
    attendant attender attorney auto-mechanic auxiliary aviator aviatress aviatrix ayah baggageman bagger bagman
    bailiff baker balloonist barber bargee bargeman barkeep barkeeper barmaid barman barnstormer barrister bartender
    baster batman beadle beater beautician bellboy bellhop bellman bibliothec blackleg blacksmith blaster bleacher
    bluejacket bo's'n bo'sun boater boatman boatswain bombardier bonesetter bookbinder bos'n bosun bowdleriser
    bowdlerizer boxer bracero brakeman bricklayer bridesmaid brigadier buckaroo buckeroo bureaucrat busboy
    bushwhacker butcher butler cabinetmaker caddie calligrapher calligraphist cannoneer canoeist canvasser captain
    car-mechanic carabineer carabinier carbineer cardiologist caregiver caretaker carhop carpenter carter cartwright
    carver caseworker caster cat's-paw cataloger cataloguer catechist cattleman cavalryman censor ceramicist
    ceramist chambermaid chancellor chargeman charioteer charwoman chef chemist chimneysweep chimneysweeper
    chiropodist churchwarden cleaner clerk clinician clockmaker clocksmith co-pilot coach coachbuilder coachman
    coadjutor coalman coastguardsman coiffeur coiffeuse coiner collier colonel comber commandant commander commando
    commissar commodore compositor conductor conductress conscript consul conveyancer cook cooper copilot
    coppersmith copyist copyreader copywriter cornhusker corporal cosmetician counsel counsellor counselor
    counselor-at-law counterman counterperson counterwoman courser courtier cowboy cowgirl cowhand cowherd cowman
    cowpoke cowpuncher cox coxswain craftsman crewman critic cropper cuirassier cupbearer currier cutter dairymaid
    dairyman dancing-master darner deacon deaconess deckhand deliverer deliveryman demonstrator dentist denturist
    deputy dermatologist diagnostician die-sinker diemaker diesinker diplomat diplomate diplomatist dishwasher
    dispatcher doc docent dock-walloper docker dockhand dockworker doctor doge dogfighter doorkeeper doughboy doula
    draftee draftsman draftsperson dragger dragoon draughtsman dresser driver drover druggist dyer editor educator
    electrician electrologist electroplater embalmer embassador embryologist employee endocrinologist endodontist
    engraver ensign enumerator envoy equerry escort esquire esthetician etiologist ex-serviceman excavator exciseman
    exodontist expurgator extern facilitator factotum falconer faller famulus farmerette farmhand farrier fellah
    feller ferryman fieldhand filer fireman fisher fisherman flier floorwalker flunkey flunky flyer footman
    footslogger forger forty-niner foster-nurse fowler framer free-lance freelance freelancer fuller fumigator
    functionary fusilier gaffer galvaniser galvanizer games-master games-mistress gardener garnishee gasman
    gastroenterologist gatherer gaucho general generalissimo geriatrician gerontologist gilder gillie glass-cutter
    glassblower glassworker glazer glazier gleaner goatherd gofer gold-beater goldbeater gondolier gondoliere
    governess gravedigger grenadier greyback grip groom groomsman groundkeeper groundskeeper groundsman guardsman
    guestworker guide gunner gunsmith gynaecologist gynecologist haematologist hairdresser hairstylist hakeem hakim
    handmaid handmaiden handyman harpooneer harpooner harvester hawker head-shrinker headmaster headmistress
    headwaiter hedger helmsman hematologist herder herdsman hewer hodman homeopath homoeopath horseshoer hostess
    hostler housebreaker housekeeper housemaid houseman housemaster housewrecker hunter huntress huntsman hussar
    hygienist iceman indexer inductee infantryman inoculator instructor instructress instrument intern interne
    internist internuncio invalidator itinerant jawan jobholder joiner journeyman judge jurist justice justiciar
    justiciary kamikaze knacker laborer labourer lacer lackey laminator lamplighter lancer lapidary lapidist lascar
    lasher lather laundress laundryman laundrywoman lawyer leatherneck lector lecturer ledgeman legionary
    legionnaire letterer librarian licenser lieutenant lifeguard lifesaver lighterman lineman linesman linkboy
    linkman lion-hunter litter-bearer liveryman loader lobsterback lobsterman lockkeeper lockman lockmaster
    locksmith logger longshoreman lumberjack lumberman luthier mace macebearer macer machinist magistrate mahout
    maid maidservant mailman major-domo major-general man-at-arms manakin mandarin manicurist manikin mannequin
    mannikin manservant mapper marcher marine mariner marshal marshall mason master-at-arms matron mechanic medic
    medico melter mender menial metalworker midinette midwife militiaman milkmaid milkman mill-girl mill-hand miller
    millwright minder miner mineworker minister minter missionary mixologist model moneyer monitrice moonlighter
    mopper mortician mounter muleteer musketeer nailer navigator navvy neurologist neurosurgeon newsboy noncom
    noncombatant notary nullifier nuncio nurse nurse-midwife oarsman oarswoman obstetrician oceanaut oculist
    office-bearer officeholder officer oiler oilman oncologist ophthalmologist optician orderly orthodontist
    orthopaedist orthopedist orthoptist ostler otolaryngologist otologist otorhinolaryngologist packer paddler
    paediatrician page painter pantryman paper-pusher paperboy paperer paperhanger para paralegal paramedic
    paramedical paraprofessional paratrooper parer parlormaid parlourmaid part-timer paster pathologist peacekeeper
    peasant pedagog pedagogue pediatrician pediatrist pedodontist peeler penpusher pensionary perfecter
    perinatologist periodontist pharmacist pharmacologist phlebotomist physician pigman pilot pistoleer pitchman
    pitman placeman placeseeker plaiter planter plasterer platelayer plater pleader plenipotentiary plotter
    ploughman ploughwright plower plowman plowwright plumber plyer podiatrist poilu porter postman potboy pothunter
    potman potter practician practitioner praetor preceptor presbyter pressman pretor principal printer privateer
    privateersman probationer proconsul proctologist procurator prof professor projectionist prompter proofreader
    propman prosecutor prospector prosthodontist pruner psychiatrist psychoanalyst publican publisher puller puncher
    purser qadi quaestor quarrier quarryman quartermaster racker radiographer radiologist radiotherapist ragsorter
    rail-splitter railroader railwayman ranger ranker rapporteur rat-catcher reaper receptionist record-keeper
    recruiter recruiting-sergeant redact redactor redcap redcoat referee refiner refinisher registrar renovator
    repairer repairman reservist restorer retainer reviser rewriter rheumatologist rhinolaryngologist rifleman
    rigger riveter rivetter roadman roaster roofer rope-maker ropemaker roper roundsman roustabout rower sacristan
    sailor salesclerk salesgirl saleslady salesman salesperson saleswoman salter sandwichman sawbones sawyer
    sceneshifter schoolma'am schoolmarm schoolmaster schoolmistress schoolteacher scorer scourer scribe scrivener
    scrubber sculler scullion seafarer sealer seaman seasonal seasoner second-in-command secretary selectman
    selectwoman seneschal sergeant sergeant-at-law serjeant serjeant-at-arms serjeant-at-law servant server
    serviceman servitor sexton sharecropper shearer sheepherder sheepman sheller shelver shepherd shepherdess
    shifter shingler shipbuilder shipwright shopwalker shoveler shoveller shrink sidesman signalman skidder skipper
    skivvy skycap slaughterer smith snarer solderer soldier solicitor sommelier sorter soundman sourdough specialist
    splicer splitter spot-welder spotter sprayer sprigger squire stableboy stableman stacker staffer stagehand
    stainer stamper standard-bearer steamfitter steeplejack steerer steersman stemmer stenographer stevedore steward
    stewardess stipendiary stippler stitcher stock-taker stocktaker stoker stonecutter stonemason strafer
    stretcher-bearer strikebreaker stringer striper stripper stuffer styler stylist subaltern subeditor
    sublieutenant submariner supercargo supermodel surgeon swaggie swagman sweep sweeper swineherd tacker tallyman
    tanker tanner tapper tapster taxer taxidermist taxman teacher teamster techie technician tekki teller tender
    territorial thatcher thrower throwster tier tiler timekeeper tinker tinner tinsmith tinter toller tollgatherer
    tollkeeper tollman touch-typist tracker tracklayer trainbandsman trainbearer trainman trainmaster trapper
    trawler trencher trimmer troller troubleshooter trustbuster tugger tuner turncock turner turtler tutor twiner
    typesetter typist typographer underboss undertaker upholsterer urologist usher usherette vaccinator valet
    vaquero varlet varnisher verger vestryman vestrywoman vet veterinarian veterinary vicar-general vice-regent
    vintager vizier voicer vulcaniser vulcanizer waggoner waggonwright wagoner wagonwright wainwright waiter
    waitress wall-paperer wallah wallpaperer warehouseman warehouser washer washerman washerwoman washwoman waterer
    waterman weaver webmaster weeder weigher welder wetter whaler wheelwright whipper-in winder wingman wiper
    wireman wirer woodcarver woodcutter woodman woodsman woodworker workingman workman wrangler wright yachtsman
    yachtswoman yardbird yardman yardmaster
""".split())
