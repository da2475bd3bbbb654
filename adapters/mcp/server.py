"""The MCP server (mcp SDK 2.x): six tools over the MemoryService, stdio and Streamable HTTP.

Tools have no session_id parameter: a server serves one store, scoped as a whole (in hosted
mode, the store of the proxy-proven caller of each message; never a tool argument).
Every failure reaches the model as a tool error whose text is `code: message`.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from tinycontext.adapters.mcp.frame import PROMPT_FRAMING
from tinycontext.app.callers import UNAUTHORIZED_MESSAGE, CallerCheck, LocalCallers, Refused
from tinycontext.app.inputs import AtLeastOne, AtLeastZero, MemoryItem, MetadataValue
from tinycontext.app.management import Management
from tinycontext.app.request_scope import request_scope
from tinycontext.app.results import Result
from tinycontext.app.service_source import Services, warm_up
from tinycontext.app.unexpected import log_unexpected
from tinycontext.domain.errors import InvalidRequestError, TinyContextError, UnauthorizedError

from . import prompts as text
from .errors import UNAUTHORIZED, UNEXPECTED, rpc_error, tool_error
from .management import ManagementGuard, register_management
from .render import render_list, render_memory, render_recall

log = logging.getLogger("tinycontext.mcp")
SERVER_NAME = "tinycontext"


P = text.PARAM
# Parameter types with their model-facing descriptions (module level: annotations are strings).
Memories = Annotated[list[MemoryItem], Field(description=P["memories"])]
QueryText = Annotated[str | None, Field(description=P["query"])]
# Numbers take the REST models' types: JSON numbers only (true is not 1), bounds in the schema.
TopK = Annotated[AtLeastOne | None, Field(description=P["top_k"])]
KindFilter = Annotated[str | None, Field(description=P["list_kind"])]
Since = Annotated[str | None, Field(description=P["since"])]
Until = Annotated[str | None, Field(description=P["until"])]
Limit = Annotated[AtLeastOne | None, Field(description=P["limit"])]
Offset = Annotated[AtLeastZero, Field(description=P["offset"])]
Sort = Annotated[str | None, Field(description=P["sort"])]
Search = Annotated[str | None, Field(description=P["search"])]
MemoryId = Annotated[str, Field(description=P["memory_id"])]
NewContent = Annotated[str | None, Field(description=P["new_content"])]
TagsFilter = Annotated[list[str] | None, Field(description=P["tags_filter"])]
MetadataFilter = Annotated[dict[str, MetadataValue] | None, Field(
    description=P["metadata_filter"])]
RecallSince = Annotated[str | None, Field(description=P["recall_since"])]
AsOf = Annotated[str | None, Field(description=P["as_of"])]
NewTags = Annotated[list[str] | None, Field(description=P["new_tags"])]
NewMetadata = Annotated[dict[str, MetadataValue] | None, Field(description=P["new_metadata"])]


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:5]:
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


class TinyContextMCP(MCPServer[Any]):
    """MCPServer whose tool errors read `code: message`, with unknown arguments rejected."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_parameters: dict[str, list[str]] = {}
        self.guard: ManagementGuard | None = None

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        if self.guard is not None:
            self.guard.check(str(uri))
        return await super().read_resource(uri, context)

    async def list_resources(self) -> Any:
        found = await super().list_resources()
        guard = self.guard
        return found if guard is None else [r for r in found if guard.visible(str(r.uri))]

    async def list_resource_templates(self) -> Any:
        found = await super().list_resource_templates()
        guard = self.guard
        return found if guard is None else [t for t in found if guard.visible(t.uri_template)]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> Any:
        known = self.tool_parameters.get(name)
        if known is None:
            raise tool_error(InvalidRequestError(
                f"there is no tool {name!r}; the tools are {', '.join(self.tool_parameters)}."
            ))
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            hint = " (this server is scoped per process)" if "session_id" in unknown else ""
            if "user_id" in unknown:
                hint = " (the user is the one the authenticating proxy names)"
            raise tool_error(InvalidRequestError(
                f"{name} has no parameter {unknown[0]!r}{hint}; it takes "
                f"{', '.join(known) or 'no arguments'}."
            ))
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            log_unexpected(log, f"tool {name} failed unexpectedly", exc.__cause__)
            raise tool_error(UNEXPECTED) from None
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise tool_error(InvalidRequestError(_describe(cause))) from None
            if isinstance(cause, ToolError):
                raise ToolError(str(cause)) from None
            raise


def _call(action: Callable[[], Any]) -> Any:
    try:
        return action()
    except TinyContextError as exc:
        raise tool_error(exc) from exc


def _json_result(result: Result) -> CallToolResult:
    """A write's result as compact JSON text, the same object as structured content."""
    document = result.to_dict()
    payload = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(
        content=[TextContent(type="text", text=payload)], structured_content=document
    )


def identity_middleware(access: CallerCheck) -> Callable[..., Any]:
    """Identify the caller of EVERY inbound MCP message (not once per session) and serve the
    message inside that caller's RequestScope; an unproven HTTP message is refused."""

    async def identify(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        request = ctx.request
        try:
            caller = access.caller(request.scope if request is not None else None)
        except Refused as refused:
            log.warning("refused MCP %s: %s", ctx.method, refused)
            raise rpc_error(UnauthorizedError(UNAUTHORIZED_MESSAGE), UNAUTHORIZED) from None
        with request_scope(caller):
            return await call_next(ctx)

    return identify


def create_mcp_server(
    services: Services,
    *,
    warm: bool = True,
    access: CallerCheck | None = None,
    management: Management | None = None,
) -> TinyContextMCP:
    """The MCP server over the process's Services.

    `warm` loads the model in the background; `access` says how callers are identified
    (hosted proxy trust, management token); `management` adds the management resources.
    """
    get_service = services.current
    from tinycontext.version import __version__

    server = TinyContextMCP(
        SERVER_NAME, title="TinyContext memory", version=__version__,
        instructions=text.INSTRUCTIONS, log_level="WARNING",
    )
    def save_memories(
        memories: Memories,
    ) -> CallToolResult:
        items = [m.model_dump(exclude_none=True) for m in memories]
        return _json_result(_call(lambda: get_service().save(items)))

    def recall_memories(
        query: QueryText = None,
        top_k: TopK = None,
        tags: TagsFilter = None,
        metadata: MetadataFilter = None,
        since: RecallSince = None,
        until: Until = None,
        as_of: AsOf = None,
    ) -> str:
        service = _call(get_service)
        result = _call(lambda: service.recall(
            query=query, top_k=top_k, tags=tags, metadata=metadata, since=since, until=until,
            as_of=as_of, framing=PROMPT_FRAMING))
        return render_recall(result, service.config.recall_max_tokens)

    def list_memories(
        kind: KindFilter = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = None,
        offset: Offset = 0,
        sort: Sort = None,
        search: Search = None,
        tags: TagsFilter = None,
        metadata: MetadataFilter = None,
        as_of: AsOf = None,
    ) -> str:
        page = _call(
            lambda: get_service().list_page(
                kind=kind, since=since, until=until, limit=limit, offset=offset, sort=sort,
                search=search, tags=tags, metadata=metadata, as_of=as_of,
            )
        )
        filtered = any(v is not None for v in (kind, since, until, search, tags, metadata))
        return render_list(page, filtered=filtered)

    def get_memory(memory_id: MemoryId, as_of: AsOf = None) -> str:
        return render_memory(_call(lambda: get_service().detail(memory_id, as_of)))

    def update_memory(
        memory_id: MemoryId,
        content: NewContent = None,
        tags: NewTags = None,
        metadata: NewMetadata = None,
    ) -> CallToolResult:
        return _json_result(_call(
            lambda: get_service().update(memory_id, content, tags, metadata)))

    def delete_memory(
        memory_id: MemoryId,
    ) -> CallToolResult:
        return _json_result(_call(lambda: get_service().delete(memory_id)))

    read = {"read_only_hint": True}
    write = {"read_only_hint": False, "destructive_hint": False}
    erase = {"read_only_hint": False, "destructive_hint": True}
    tools: list[tuple[Callable[..., Any], str, str, dict[str, bool]]] = [
        (save_memories, text.SAVE, "Save memories", write),
        (recall_memories, text.RECALL, "Recall memories", read),
        (list_memories, text.LIST, "List memories", read),
        (get_memory, text.GET, "Get one memory", read),
        (update_memory, text.UPDATE, "Update a memory", write),
        (delete_memory, text.DELETE, "Delete a memory", erase),
    ]
    for fn, description, title, hints in tools:
        server.add_tool(
            fn, description=description, structured_output=False,
            annotations=ToolAnnotations(title=title, **hints),
        )
        server.tool_parameters[fn.__name__] = list(inspect.signature(fn).parameters)
    if access is not None or management is not None:
        server.middleware.append(identity_middleware(access or LocalCallers()))
    if management is not None:
        server.guard = register_management(server, get_service, management)
    if warm:
        warm_up(services)
    return server

