"""TokenReview: a create that is answered, never stored (kube's ``tokenreview.REST``).

The token in the spec goes through the server's token authenticators (static tokens, then
ServiceAccount tokens) for the spec's audiences (the server's own when none are given); the
status says whether it authenticated, as whom, for which audiences, or the error.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..._requester import Requester
from ..._status import StatusError
from ..._store import Obj
from .._base import Strategy
from .._context import Context

__all__ = ["TokenReviewStrategy"]


class TokenReviewStrategy(Strategy):
    """Answers a TokenReview with the server's authenticator."""

    answers_create: ClassVar[bool] = True

    def answer(self, obj: Obj, who: Requester, ctx: Context) -> Obj:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        token = str(spec.get("token") or "")
        if not token:
            raise StatusError.bad_request("token is required for TokenReview in authentication")
        audiences = tuple(str(a) for a in spec.get("audiences") or ())
        authenticator = ctx.authenticator
        if authenticator is None:  # pragma: no cover - every served Context has one
            raise StatusError(500, "InternalError", "no authenticator")
        result = authenticator.review(token, audiences, ctx.store)
        status: dict[str, Any]
        if result.user is None:
            status = {"user": {}, "error": result.error}
        else:
            status = {
                "authenticated": True,
                "user": result.user.user_info,
                "audiences": list(result.audiences),
            }
        obj["status"] = status
        obj["metadata"].setdefault("creationTimestamp", None)
        return obj
