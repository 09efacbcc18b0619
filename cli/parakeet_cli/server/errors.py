"""Errors as OpenAI's API reports them: ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from typing import Mapping, Optional

from starlette.responses import JSONResponse

# OpenAI's error types: client mistakes are "invalid_request_error", our own failures and
# overload are "server_error".
INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"


class APIError(Exception):
    """An HTTP error answer; raised anywhere in a handler, turned into a JSON response."""

    def __init__(self, status: int, message: str, *, type: str = INVALID_REQUEST,
                 param: Optional[str] = None, code: Optional[str] = None,
                 headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        return error_response(self.status, self.message, type=self.type, param=self.param,
                              code=self.code, headers=self.headers)


def error_response(status: int, message: str, *, type: str = INVALID_REQUEST,
                   param: Optional[str] = None, code: Optional[str] = None,
                   headers: Optional[Mapping[str, str]] = None) -> JSONResponse:
    body = {"error": {"message": message, "type": type, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))
