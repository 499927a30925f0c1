"""Screen activity: what was on a user's screen, grouped by app and window (`Mirix.screen_activity`)."""

from typing import Annotated

from fastapi import APIRouter, Query

from mirix_py.screens.activity import GROUP_TEXT_CHARS, SCREEN_GAP, FrameGroup
from mirix_py.server.deps import Engine, User
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import ErrorOut, When

router = APIRouter(prefix=f"{API_PREFIX}/users/{{user_id}}", tags=["memories"])

DESCRIPTION = (
    "Screenshot inputs grouped into frame groups, newest first: consecutive frames of one app and window "
    f"(a new group after {int(SCREEN_GAP.total_seconds() // 60)} minutes without a frame), each with its first "
    "and last capture time, frame count, input ids, the inputs whose thumbnail is kept, the episodic and "
    "resource memories made from it, and the text read: the input log's while it is kept, else those "
    f"memories', lines deduplicated, cut to {GROUP_TEXT_CHARS} characters. `since`/`until` bound the capture time."
)


@router.get("/screen-activity", response_model=list[FrameGroup], description=DESCRIPTION,
            responses={422: {"model": ErrorOut}})
def screen_activity(user_id: User, mx: Engine, since: When | None = None, until: When | None = None,
                    limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[FrameGroup]:
    """What was on the user's screen, by app and window."""
    return mx.screen_activity(user_id=user_id, since=since, until=until, limit=limit)
