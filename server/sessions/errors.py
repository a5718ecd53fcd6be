"""The session service's error, translated to a JSON-RPC error by each front door."""

from __future__ import annotations


class ServiceError(Exception):
    """An error the front door reports to the client with `code`."""

    def __init__(self, code: int, message: str, *, data: object = None):
        super().__init__(message)
        self.code = code
        self.data = data
