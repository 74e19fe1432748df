"""API errors as the real server reports them: a metav1.Status with reason, code and details."""
from __future__ import annotations


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}
        self.headers = headers or {}

    def status(self) -> dict:
        out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": self.message, "reason": self.reason, "details": self.details, "code": self.code}
        if not self.details:
            del out["details"]
        return out


def _res(rt) -> str:
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


def _details(name: str, group: str, kind: str, **more) -> dict:
    """StatusDetails as Go encodes it: empty fields (group "" for the core group) are omitted."""
    out = {"name": name, "group": group, "kind": kind, **more}
    return {k: v for k, v in out.items() if v not in ("", None)}


def not_found(rt, name: str) -> ApiError:
    """404 NotFound for a named object (details.kind is the resource, as the real server sends it)."""
    return ApiError(404, "NotFound", f'{_res(rt)} "{name}" not found', _details(name, rt.group, rt.plural))


def already_exists(rt, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{_res(rt)} "{name}" already exists', _details(name, rt.group, rt.plural))


def generate_name_conflict(rt, name: str) -> ApiError:
    """errors.NewGenerateNameConflict(gr, name, 1): every name the server drew for generateName was taken."""
    return ApiError(409, "AlreadyExists", f'{_res(rt)} "{name}" already exists, the server was not able to generate '
                    "a unique name for the object", _details(name, rt.group, rt.plural, retryAfterSeconds=1))


MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def conflict(rt, name: str, why: str = MODIFIED) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {_res(rt)} "{name}": {why}',
                    _details(name, rt.group, rt.plural))


def invalid(rt, name: str, causes: list[dict]) -> ApiError:
    # apimachinery's ErrorList.ToAggregate(): distinct messages, in brackets when more than one
    msgs = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in causes))
    text = "[" + ", ".join(msgs) + "]" if len(msgs) > 1 else "".join(msgs)
    return ApiError(422, "Invalid", f'{rt.kind}{"." + rt.group if rt.group else ""} "{name}" is invalid: {text}',
                    _details(name, rt.group, rt.kind, causes=causes))


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(message: str, details: dict | None = None) -> ApiError:
    return ApiError(403, "Forbidden", message, details)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def unsupported_media(message: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", message)


def method_not_allowed(message: str) -> ApiError:
    return ApiError(405, "MethodNotAllowed", message)


def too_many_requests(retry_after: int = 1) -> ApiError:
    """What kube-apiserver's max-in-flight and priority-and-fairness filters answer: the wait both in the body and in
    the Retry-After header, which client-go honours."""
    return ApiError(429, "TooManyRequests", "the server has received too many requests and has asked us to try again later",
                    {"retryAfterSeconds": retry_after}, headers={"Retry-After": str(retry_after)})


def internal(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {message}")
