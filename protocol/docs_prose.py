"""The hand-written parts of protocol/README.md; `protocol.docs` puts the generated ones around
them. Edit here, then run `python -m protocol.docs`."""

from __future__ import annotations

from protocol import errors
from protocol.methods import PROTOCOL_VERSION

INTRO = """\
agentls speaks JSON-RPC 2.0 over the stdio of `agentls serve`, framed like the Language Server
Protocol. Editors, scripts and CI jobs all use the same methods. This page is generated from the
method table in `protocol/methods.py` and the golden examples in `protocol/fixtures/`
(run `{command}`); the machine-readable form is `protocol/schema/agentls.schema.json`. A Python
client ships in the package: `protocol.client` (see [Python client](#python-client))."""

TRANSPORT = """\
Start `agentls serve` as a child process and talk over its stdin and stdout. Every message is
a header, a blank line, and a UTF-8 JSON body:

```text
Content-Length: {length}\\r\\n
\\r\\n
{body}
```

- `Content-Length` counts bytes of the body; other headers are ignored.
- The server writes `Content-Type: application/vscode-jsonrpc; charset=utf-8` after the length
  on every message, as LSP servers do; the body is always UTF-8.
- Messages are JSON-RPC 2.0 requests, responses and notifications; ids are strings or integers;
  batches are not supported. Fields are camelCase.
- stdout carries frames only. Logs go to stderr and to `logs/serve.log` in the data dir: read or
  discard stderr, since a full pipe blocks the server.
- Bad input never stops the server: an unparseable frame, a body nested deeper than 256 levels
  (`-32700`) or a malformed message (`-32600`) is answered with an error (its `id` is null when
  the message's id cannot be read), and reading resumes at the next `Content-Length` header,
  also after a header block without one or a length that is wrong. A notification's name sent
  with an id (`session/cancel`, `initialized`) is `-32600`."""

LIFECYCLE = """\
The lifecycle is plain LSP, so `vscode-languageclient`, LSP4J and similar clients work as is:

1. the client sends `initialize` with its capabilities, and waits for the answer. Any other
   request before it is answered `-32002` (LSP's `ServerNotInitialized`) and notifications are
   dropped, except `exit`. The answer's `capabilities` hold only `experimental.agentls`:
   agentls implements none of LSP's language features (no text-document sync);
2. the client sends the `initialized` notification;
3. sessions: `session/new` (or `session/load`), then turns with `session/prompt`;
4. the client sends `shutdown`: running turns end `aborted` (their commands are killed), each
   `session/prompt` in flight gets its normal response after its `turn_end`, and only then
   does `shutdown` answer. Any request after `shutdown` gets `-32600` (Invalid Request); then
   the client sends the `exit` notification and closes the server's stdin. The server also
   exits when its stdin ends.
5. SIGTERM, SIGINT and SIGHUP end the process the same way (running turns end `aborted` and are
   stored so, commands' process groups are killed), with exit code 143, 130 and 129, also when
   the server was started with SIGINT ignored (as a background job of a script is).

```json
{initialize_request}
```

```json
{initialize_response}
```"""

CAPABILITIES = """\
The client says what it can show in `capabilities.experimental.agentls`:

| field | meaning when true |
|---|---|
| `permissions` | it answers `session/request_permission`. Without it, every tool call that needs approval is refused and the model is told so. |
| `questions` | it answers `session/ask_question`. Without it, the `ask_user_question` tool returns `user_not_reachable` and the model proceeds on its own. |
| `images` | it can send and show images. |
| `diffs` | it can render the `diff` of a `tool_call_update`. |

The server answers in the same place:

| field | meaning |
|---|---|
| `protocolVersion` | the version of this protocol, an integer (now {version}). |
| `version` | the agentls version. |
| `engines` | engine ids `session/new` accepts. |
| `providers` | model provider ids `session/new` accepts. |
| `features` | optional features this server has, e.g. `steer`, `images`, `permissions`, `questions`. |

**Versioning.** `protocolVersion` changes only with a breaking change: a method or field removed
or renamed, or a meaning changed. Clients compare it exactly (the Python client refuses another
version). Additions keep the version, so a client must:

- ignore fields it does not know, in results and in updates;
- ignore update kinds it does not know (the Python client passes them on as `UnknownUpdate`),
  and tolerate enum values it does not know;
- answer server->client requests it does not know with `-32601`;
- look for a feature in `features` before relying on it, and expect `-32601` from an older
  server for a method it does not have."""

TURNS = """\
A **turn** is one `session/prompt` request. The request stays open while the turn runs; events
stream as `session/update` notifications meanwhile; the response carries the terminal.

- **Exactly one terminal** per turn:

  | `terminal` | `stopReason` | when |
  |---|---|---|
  | `completed` | `end_turn`, `max_tokens`, `max_turn_requests`, `refusal` | the agent stopped |
  | `aborted` | `cancelled` | the client cancelled |
  | `failed` | `error` | something broke; `error` says what. The session stays usable. |
  | `timed_out` | `timeout` | the turn deadline passed (`turnTimeout`, default 30 minutes) |

- **`turn_end` comes last.** Every turn's final update is `turn_end`, mirroring the response;
  the `session/prompt` response follows it.
- **`seq`** increases with every update of a session, across turns and across server
  processes: use it to order updates. `turnId` says which turn an update belongs to. Each prompt
  takes a `seq` of its own (its `user_message_chunk` in the stored history; it is not sent live),
  so the first update of a new session's first turn has `seq` 2. `session/load` replays the
  stored history with the `seq` each update had when it was sent (progress updates and merged
  chunks leave gaps), and a session loaded in a new process carries on above the highest stored
  `seq`. Updates the server adds while mending an old session (see below) take new, higher
  numbers. A client that has shown everything up to some `seq` can skip replayed updates at or
  below it.
- **Every tool call is closed.** A `tool_call` is always followed by a `tool_call_update` with
  a final status (`completed`, `failed` or `denied`) before the turn's `turn_end`, however the
  turn ends, and the model gets a result for it in the history (so the next prompt works with
  every provider):

  | the turn ends by | an unfinished call ends as | its result for the model |
  |---|---|---|
  | cancel (`session/cancel`, interrupt, ACP `session/cancel`) | `failed`, `error` "Interrupted: …" | the same text, as an error result |
  | the turn deadline | `failed`, `error` "Interrupted: …" | the same |
  | a provider failure after the call was announced | `failed`, `error` "Not run: the turn failed (…)" | the same (a call whose reply never finished is left out of the history) |
  | a tool that crashes | `failed`, `error` "<tool> failed unexpectedly: …" | the same; the turn goes on |
  | a permission or question left unanswered | as for cancel or deadline; an error answer counts as a refusal / decline and the turn goes on | |
  | shutdown or a signal | as for cancel (the turn ends `aborted`) | |
  | a crash (`kill -9`, power loss) | at the next start the turn is stored `aborted` and its open calls `failed` with "the server stopped before this turn finished" | the model's history resumes after the cut turn's last finished step (each finished step is stored at once, with the todos it wrote) |

  ACP shows the closing update as `tool_call_update` with status `failed`; stream-json as a
  `user` message with a `tool_result` whose `is_error` is true. A session stored by an older
  version with a call left open is mended when loaded: the call is replayed closed (`failed`,
  "Interrupted: …") and the model gets an interrupted result for it.
- **Usage** on a turn that does not complete (`aborted`, `failed`, `timed_out`) sums the model
  calls that finished (`step_finish`); a model call cut short by the interruption is not in it.
  A model call that was retried (`stream_retry`) counts what its failed attempts reported
  before they broke (e.g. Anthropic's input tokens, an OpenRouter usage chunk) in its step's
  `step_finish` usage and so in the turn's.
- **Nothing is reported stored that was not.** When the session store cannot write (the disk
  is full, the database cannot be written) the session goes on in memory: before the
  `turn_end` comes a `store_warning` (what the store said, how many writes wait), and the
  `turn_end` and the response carry `stored: false`. The writes are kept, in order, and retried
  with the next ones (the next update or turn); a later turn whose writes all landed has no
  `stored` field. A process that ends while writes wait loses them (`session/load` then shows the
  history up to the last write that landed).
- **Nothing arrives late.** Whatever an engine, tool or subagent produces after its turn's
  terminal is dropped: never delivered, never stored.
- **One turn at a time.** A prompt to a session that is running a turn fails with `-31002`.
  To add to a running turn, use `session/steer`.
- **Cancel** with the `session/cancel` notification, or with `$/cancelRequest` for the pending
  `session/prompt` id. The turn ends `aborted` within a second (shell commands are killed), and
  the prompt's response is still a normal result, not an error.
- **Retries.** A `stream_retry` update means the model call is being retried: drop the message
  and thought chunks (and announced tool calls) since the last `step_finish`; they stream again."""

ANSWERING = """\
During a turn the server may send two requests. The turn waits for the answer.

**`session/request_permission`**: may this tool call run? A `tool_call` update for the same
`toolCallId` has already been sent. Answer `{"outcome": {"outcome": "selected", "optionId": ...}}`
with one of the offered options (`allow_once`, `allow_always`, `reject_once`, `reject_always`),
or `{"outcome": {"outcome": "cancelled"}}`. When allowing, `updatedInput` replaces the tool's
input; when rejecting, `message` tells the model why. A file edit or write comes with a
`proposal`: the whole file before (`oldText`, absent for a new file) and after (`newText`), as
the call would write it now, to show in the editor's own diff view; allowing with `updatedInput`
`{"content": "..."}` writes that text to the file instead (the user's version of the change),
and the model is told the user changed it. `allow_always` is remembered for the
session. No answer within `permissions.approvalTimeout` (default 120 s) counts as a rejection,
and so does a malformed result. Answer with a result, not an error.

**`session/ask_question`**: one to four multiple-choice questions. Answer
`{"answers": {"<question text>": "<label>"}}` (a list of labels for `multiSelect` questions;
free text is accepted too), or `{"declined": true}`. A malformed result counts as declined; the
tool's own timeout (default 60 s) gives the model `user_timeout`.

When the turn ends first (cancel, deadline), the server withdraws the request with
`$/cancelRequest {"id": ...}`: stop asking the user; a late answer is ignored. The `permission`
and `question` updates record what was asked and the outcome, for logs and other observers.
Answer any other server->client request with `-32601`."""

EDITOR_CONTEXT = """\
A prompt (`session/prompt`, `session/steer`) is a list of content blocks: `text`, `image`, and
what the editor attaches, each with an optional `range` (0-based lines and characters, `end`
exclusive, as in LSP) and a `context` kind: `selection`, `file`, `diagnostics` or `terminal`.

- `resource {uri, text, mimeType?, name?, range?, context?}`: the text itself (the selected
  lines, a file, the current problems, a terminal's recent output);
- `resource_link {uri, name?, mimeType?, range?, context?}`: a file by reference; the model is
  told where it is and reads it with its tools when it needs it.

The model gets each one, in the prompt's order, as a delimited block that names the file
(relative to the workspace when inside it) and its 1-based lines, e.g.
`<context kind="selection" path="src/app.py" lines="10-14">…</context>`; a block whose text
contains `</context` cannot close it. A block with a range and no kind is a selection. A file
URI's `#L10:14` or `#L10-L14` fragment counts as its lines when there is no range. The stored
history and `session/search` show each block by its name and lines
(`@src/app.py:10-14 (selection)`). Over ACP, `resource_link` and embedded text `resource`
blocks map to these (an embedded binary resource is described by its size, not sent)."""

CHECKPOINTS = """\
Before a turn's file tools (`write_file`, `edit_file`, `edit_file_hashed`) first change a file,
agentls keeps what it held, and what it wrote, in a per-session store under the data dir
(`checkpoints/`: the contents by SHA-256 and a log per session; never the user's git). The
`checkpoint` update tells the client that a turn can be undone and which files it changed.
What shell commands change is not kept.

`session/rewind {sessionId, turnId, files?, conversation?, dryRun?}` undoes that turn and every
later one:

- `files` (default true): each file they changed goes back, byte for byte, to what it held
  before the first of them changed it; files they created are deleted. If any of those files
  changed outside agentls since agentls last wrote it, nothing is restored and the answer is
  `-31006` with `data.conflicts` listing them. A `dryRun` changes nothing and says what would be
  restored, removed, and what conflicts.
- `conversation` (default false): a new session, a branch, holds the conversation before the
  turn (its turns, what the model had then, its files' checkpoints); the answer's `sessionId`
  names it, to `session/load` and prompt. The original session is kept as it was and stays
  loadable. Refused when a later turn compacted the history the branch needs.

Works after a restart: load the session in the new process, then rewind. Refused while the
session runs a turn (`-31002`)."""

PYTHON_CLIENT = """\
`protocol.client` needs only pydantic and the standard library. It spawns `agentls serve` (or
talks over a reader/writer pair you give it), initializes, and turns each prompt into an async
iterator of the [update](#session-updates) models, ending with the `PromptResult`:

```python
from protocol.client import AgentMessageChunk, Client, PromptResult, ToolCall, allow_once

async with await Client.spawn(on_permission=allow_once) as client:
    session = await client.new_session("/path/to/repo", mode="plan")
    async for update in session.prompt("What does this project do?"):
        if isinstance(update, AgentMessageChunk):
            print(update.text, end="")
        elif isinstance(update, ToolCall):
            print(f"[{update.title}]")
        elif isinstance(update, PromptResult):
            print(f"\\n{update.terminal}")
```

Errors are typed (`SessionNotFound`, `SessionBusy`, `InvalidParams`, ... see [Errors](#errors));
permission and question handlers default to `reject` and `decline`. Runnable examples are in
`examples/`."""

PYTHON_CLIENT_REFERENCE = """\
Every public name of `protocol.client`, each with an example.

**Connecting.** `Client.spawn()` starts `agentls serve` (`default_command()`: this Python's
`-m server.cli serve`) and sends `initialize` with `DEFAULT_CAPABILITIES`; `Client.connect()`
talks over a reader/writer pair you opened; `Connection` is the JSON-RPC peer underneath both
(`client.connection`), for methods the client has no helper for.

```python
from protocol.client import DEFAULT_CAPABILITIES, Client, Connection, default_command

caps = {**DEFAULT_CAPABILITIES, "questions": False}  # the model is told no user can answer
async with await Client.spawn(command=default_command(), capabilities=caps) as client:
    print(client.server_info["version"], client.supports("steer"))
    conn: Connection = client.connection
    print(await conn.request("engines/list", {}))
```

**Sessions and turns.** `new_session()` and `load_session()` return a `Session`;
`Session.prompt()` returns a `Turn` to iterate, `Session.run()` waits for it. Each item is an
`Update` (one of the models below, or `UnknownUpdate` for a kind this client does not know), and
the last is the `PromptResult`. `Session.rewind()` undoes a turn and the later ones (see
[Checkpoints and rewind](#checkpoints-and-rewind)); `RewindRefused` says what changed since. `answer_text()` joins the agent's text as a user saw it (without
text a `StreamRetry` withdrew); `parse_update()` types one raw update dict. `PromptOptions` sets
a turn's model, thinking or deadline.

```python
from protocol.client import PromptOptions, PromptResult, Session, Turn, UnknownUpdate, Update
from protocol.client import InvalidParams, RewindRefused, answer_text, parse_update

session: Session = await client.new_session(".", mode="plan")
turn: Turn = session.prompt("Summarize README.md", options=PromptOptions(think="hard"))
async for item in turn:
    if isinstance(item, PromptResult):
        print(item.terminal, item.usage.output_tokens)
    elif isinstance(item, UnknownUpdate):
        print("newer server:", item.kind)
updates: list[Update] = turn.updates
print(answer_text(updates) == turn.text)
print(parse_update({"kind": "agent_message_chunk", "text": "hi"}))
second = session.prompt("List the tests")
try:
    await session.steer("only the failing ones")  # joins the running turn
except InvalidParams:
    pass  # the turn had ended already: no turn to steer
await session.cancel()  # stops it; it ends `aborted`
print((await second.wait()).terminal)
preview = await session.rewind(second.turn_id, dry_run=True)  # what undoing it would restore
try:
    await session.rewind(second.turn_id, conversation=True)  # files, and a branch session
except RewindRefused as refused:
    print(refused.data)  # {"conflicts": [...]}: changed outside agentls since
```

**Updates.** One model per kind; match on the class (see [Session updates](#session-updates)
for their fields):

```python
from protocol.client import (AgentMessageChunk, AgentThoughtChunk, Checkpoint, Compaction, McpStatus,
    ModeChanged, ModelSwitched, PermissionNote, Plan, QuestionNote, StepFinish, StoreWarning,
    StreamRetry, SubagentUpdate, ToolCall, ToolCallUpdate, TurnEnd, UserMessageChunk,
    WorkspaceTrust)

async for item in session.prompt("Fix the failing test"):
    match item:
        case UserMessageChunk(text=text) | AgentMessageChunk(text=text):
            print(text, end="")
        case AgentThoughtChunk():
            pass  # thinking, shown folded
        case ToolCall(title=title):
            print(f"[{title}]")
        case ToolCallUpdate(status=status, output=output):
            print(status, (output or "")[:80])
        case PermissionNote() | QuestionNote():
            pass  # what the user was asked, and the answer
        case Plan(entries=entries):
            print([e.content for e in entries])
        case SubagentUpdate() | ModelSwitched() | Compaction() | StreamRetry() | StepFinish():
            pass
        case ModeChanged(mode=mode):
            print(f"mode: {mode}")  # the plan was approved
        case McpStatus() | WorkspaceTrust() | StoreWarning():
            pass  # show as a notice
        case Checkpoint(files=files):
            print("can be undone:", files)  # session.rewind(turn_id)
        case TurnEnd(terminal=terminal):
            print(terminal)
```

**Answering the server.** A `PermissionHandler` gets `RequestPermissionParams` and returns a
`RequestPermissionResult`; a `QuestionHandler` gets `AskQuestionParams` and returns an
`AskQuestionResult`. Either may be async. Ready-made: `allow_once`, `reject` (the default),
`pick(request, *kinds)`, `selected(option_id)`, `cancelled()` and `decline` (the default for
questions).

```python
from protocol.client import (AskQuestionParams, AskQuestionResult, PermissionHandler,
    QuestionHandler, RequestPermissionParams, RequestPermissionResult, allow_once, cancelled,
    decline, pick, reject, selected)

def edits_only(request: RequestPermissionParams) -> RequestPermissionResult:
    if request.tool_call.name in ("edit_file", "write_file"):
        return pick(request, "allow_always", "allow_once")
    return reject(request) if request.options else cancelled()

def first_choice(request: AskQuestionParams) -> AskQuestionResult:
    if not request.questions[0].options:
        return decline(request)
    q = request.questions[0]
    return AskQuestionResult(answers={q.question: q.options[0].label})

on_permission: PermissionHandler = edits_only
on_question: QuestionHandler = first_choice
async with await Client.spawn(on_permission=on_permission, on_question=on_question) as strict:
    lenient = await strict.new_session(".", on_permission=allow_once)  # this session allows all
    print(lenient.id, selected("allow_once"))
```

**Errors.** Everything the client raises is an `AgentlsError`: `ConnectionClosed` when the server
went away, `ProtocolVersionError` for another protocol version, and `RpcError` for an error
response, with one class per code in `ERROR_CLASSES` (see [Errors](#errors)).

```python
from protocol.client import (ERROR_CLASSES, AgentlsError, ConnectionClosed, EngineUnavailable,
    InternalError, InvalidParams, InvalidRequest, MethodNotFound, ParseError, ProtocolVersionError,
    ProviderUnavailable, RequestCancelled, RpcError, ServerNotInitialized, SessionBusy,
    SessionNotFound, Unauthorized)

try:
    await session.run("again")
except SessionBusy:
    await session.steer("again")
except (SessionNotFound, EngineUnavailable, ProviderUnavailable, Unauthorized) as err:
    print(err.code, err.message)
except InvalidParams as err:
    print([f["path"] for f in err.data])
except (ParseError, InvalidRequest, MethodNotFound, InternalError) as err:
    print("server refused:", err)
except (ServerNotInitialized, RequestCancelled, RpcError) as err:
    print(ERROR_CLASSES.get(err.code, RpcError).__name__)
except (ConnectionClosed, ProtocolVersionError, AgentlsError):
    raise
```"""


SCRIPTED_MODEL = """\
For client tests and demos without a model, `--provider scripted` (or `AGENTLS_PROVIDER=scripted`)
plays replies from `AGENTLS_SCRIPT`: the path of a JSON file, or the JSON itself (a value that
starts with `[`). It is a list of replies, one per model call, each an object with these keys
(all optional):

| key | meaning |
|---|---|
| `text` | the reply's text, streamed word by word |
| `thinking` | thinking streamed before the text |
| `toolCalls` | a list of `{"name", "arguments"}`: tool calls the reply makes, by agentls's tool names (`read_file`, `bash`, ...) |
| `error` | fail this model call with this message (the turn ends `failed`) |
| `delay` | seconds to wait before each streamed chunk |

```json
[
  {"text": "Let me look.", "toolCalls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
  {"text": "The README starts with a title."}
]
```

Every session plays the script from its first reply; a subagent continues its parent's (unless
its profile names another model). A call
after the last reply fails with `no scripted reply left`. A key not in the table, a tool call
without a `name`, or a value that is not a list fails the turn with an error naming it. Without
`AGENTLS_SCRIPT`, the scripted model answers `You said: <the last user message>`."""


ERRORS_INTRO = """\
Errors are JSON-RPC error responses. `-32602` carries `data`: a list of
`{"path", "message", "type"}`, one per failing field. JSON-RPC reserves -32768..-32000 for its
own codes and LSP's (-32099..-32000, -32899..-32800); agentls's own codes are outside that
range, from -31001 down, so no LSP library mistakes one for another. The schema lists the codes
under `errors` and their names under `errorNames`."""

METHOD_ERRORS: dict[str, tuple[int, ...]] = {
    "session/new": (errors.ENGINE_UNAVAILABLE, errors.PROVIDER_UNAVAILABLE),
    "session/prompt": (errors.SESSION_BUSY,),
    "session/load": (errors.SESSION_BUSY,),
}
"""Errors particular to a method, besides invalid params and (for methods that name a session)
an unknown session."""


def initialize_example() -> tuple[dict, dict]:
    caps = {"permissions": True, "questions": True, "images": True, "diffs": True, "reportTurns": True}
    request = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "processId": 4242,
            "clientInfo": {"name": "my-script"},
            "capabilities": {"experimental": {"agentls": caps}},
        },
    }
    agentls = {
        "protocolVersion": PROTOCOL_VERSION,
        "version": "0.1.0",
        "engines": ["native"],
        "providers": ["anthropic", "openai", "scripted"],
        "features": ["steer", "images", "permissions", "questions"],
    }
    result = {
        "capabilities": {"experimental": {"agentls": agentls}},
        "serverInfo": {"name": "agentls", "version": "0.1.0"},
    }
    return request, {"jsonrpc": "2.0", "id": 0, "result": result}
