"""``edgedesk chat [MODEL]``: a conversation in the terminal, on the same core as the window.

Answers stream to standard output (a reasoning model's thinking to standard error);
grounded answers end with their numbered sources. Conversations are saved to the same
store as the window's (unless ``--ephemeral``), so they are listed there and by
``edgedesk chats list``. When standard input is not a terminal it is read as a script:
one message or slash command a line, ending at EOF with status 0.

Exit status: 0 when the chat ends (/quit, Ctrl-D, EOF, Ctrl-C twice at the prompt); 2
when MODEL or --collection cannot be used (the message says why), before anything is
asked. An error during the chat (a model that fails to load, a bad /model) is printed
and the chat goes on.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from desktop.base.config import user_path
from desktop.base.crash import shown
from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.chat import (
    SOURCES_K,
    Attachment,
    ChatCore,
    ChatSaver,
    Conversation,
    EmbeddingModelMissing,
    PendingTurn,
    Sampling,
    from_path,
    missing_embedding_model,
    model_sees,
    model_thinks,
    was_cited,
)
from desktop.cli.arguments import context_for, text_arg
from desktop.cli.options import check_sampling, moe_settings
from desktop.cli.terminal_input import CtrlC, interrupt_sets, prompted, script, stop_waking
from desktop.cli.tool_approval import preapproved, terminal_approver, yes_tools_option
from desktop.engine import Delta
from desktop.retrieval import Hit

if TYPE_CHECKING:
    from desktop.catalog import Catalog, InstalledIndex
    from desktop.engine import ImageLimits, Scheduler
    from desktop.resolve import ModelResolver
    from desktop.retrieval import Library, Searcher
    from desktop.store import ChatStore
    from desktop.tools import ToolBox


class ChatHere(Protocol):
    """What a terminal chat reads (the context it runs in has them, built lazily)."""

    @property
    def catalog(self) -> Catalog:
        """The model catalog (which models think)."""

    @property
    def resolver(self) -> ModelResolver:
        """Model reference -> fitted load plan."""

    @property
    def installed(self) -> InstalledIndex:
        """Downloaded and imported models (the default model)."""

    @property
    def scheduler(self) -> Scheduler:
        """The gate in front of llama.cpp."""

    @property
    def chat_store(self) -> ChatStore:
        """Saved conversations."""

    @property
    def toolbox(self) -> ToolBox:
        """The tools a chat may call."""

    @property
    def library(self) -> Library:
        """Document collections."""

    @property
    def searcher(self) -> Searcher:
        """Search over the document collections."""

    @property
    def image_limits(self) -> ImageLimits:
        """The caps on one attached picture in force."""


HELP = """commands:
  /new               start a new chat (same model, system prompt and collection)
  /regenerate        answer the last question again
  /model ID          use another model from the next answer on
  /collection NAME   ground answers in a document collection (/collection alone: none)
  /image PATH        attach a picture to your next message (a vision model sees it;
                     repeat for more, /image alone lists them)
  /think on|off      let a reasoning model think before answering, or answer at once
                     (kept with the chat, like the window's Think switch)
  /save              save this chat (one started with --ephemeral is otherwise forgotten)
  /quit              leave (so do Ctrl-D and Ctrl-C twice at the prompt)
  /help              this list
Ctrl-C while an answer streams stops the answer. A line starting with // is sent as a
message starting with /. When the model calls an MCP tool, the next line answers
"o" (allow once), "a" (always for this tool) or "d" (deny); see 'edgedesk tools list'."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``chat`` verb."""
    from desktop.cli.options import common_options, moe_options, sampling_options

    parser = sub.add_parser(
        "chat",
        parents=[common_options(), moe_options()],
        help="chat with a model in the terminal",
        description="Chat with MODEL (a catalog id, an installed id, a .gguf path or\n"
        "REMOTE/MODEL; default: the installed chat model). Conversations are saved like\n"
        "the window's. Reads a script of lines from standard input when it is not a\n"
        "terminal; exits 2 when MODEL or --collection cannot be used.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("model", metavar="MODEL", nargs="?", default=None)
    parser.add_argument(
        "--collection",
        metavar="NAME",
        type=text_arg,
        default=None,
        help="ground answers in this document collection, with citations",
    )
    parser.add_argument("--system", metavar="TEXT", type=text_arg, default="", help="system prompt")
    parser.add_argument(
        "--no-think",
        action="store_true",
        help="a reasoning model answers at once, without thinking first "
        "(/think on switches it back)",
    )
    parser.add_argument(
        "--ephemeral",
        action="store_true",
        help="keep the chat in memory only (/save saves it after all)",
    )
    yes_tools_option(parser)
    # A chat's defaults, as the window's new chats have them.
    sampling_options(parser, max_tokens=Sampling.max_tokens, temperature=Sampling.temperature)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the chat until /quit or the end of input; returns the exit code."""
    check_sampling(args)
    ctx = context_for(args, moe_settings(args))
    try:
        model = check_model(ctx, model_ref(args.model)) if args.model else default_chat_model(ctx)
        if args.collection:
            check_collection(ctx, args.collection)
        chat = Conversation(
            model=model,
            system_prompt=args.system,
            ephemeral=args.ephemeral,
            collection=args.collection or "",
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            think=not args.no_think,
        )
        terminal = TerminalChat(ctx, chat, yes_tools=preapproved(args))
        interactive = sys.stdin is not None and sys.stdin.isatty()
        if interactive:
            print(
                f"chatting with {shown(model)}; /help lists commands, /quit leaves", file=sys.stderr
            )
        if not interactive:
            terminal.loop(script())
        else:
            ctrl_c = CtrlC()
            previous = signal.signal(signal.SIGINT, ctrl_c)
            try:
                terminal.loop(prompted(ctrl_c))
            finally:
                signal.signal(signal.SIGINT, previous)
                stop_waking()
    finally:
        ctx.close()
    return 0


def model_ref(ref: str) -> str:
    """A file made absolute (the chat is saved and reopened elsewhere); ids as given."""
    path = user_path(ref)
    return str(path.resolve()) if path.is_file() else ref  # NAME/MODEL is no file


def check_model(ctx: ChatHere, ref: str) -> str:
    """``ref`` if it names a chat model this machine can use; else InvalidRequest (2)."""
    try:
        spec = ctx.resolver(ref)
    except EdgeDeskError as exc:
        raise InvalidRequest(exc.message, param="model") from None
    if spec.kind != "chat":
        raise InvalidRequest(
            f"{shown(ref)} is not a chat model (it is for {spec.kind}); see 'edgedesk models list'",
            param="model",
        )
    return ref


def installed_chat_models(ctx: ChatHere) -> list[str]:
    """Ids of the installed models that can chat, catalog ones first."""
    found = []
    for ref in [e.id for e in ctx.catalog if e.kind == "chat"] + [
        m.id for m in ctx.installed.all()
    ]:
        if ref in found:
            continue
        try:
            ctx.resolver.locate(ref)
            if ctx.resolver(ref).kind == "chat":
                found.append(ref)
        except EdgeDeskError:
            continue  # not installed, damaged or not allowed: not a default
    return found


def default_chat_model(ctx: ChatHere) -> str:
    """The installed chat model (the first, and says so, when there are several)."""
    found = installed_chat_models(ctx)
    if not found:
        raise InvalidRequest(
            "no chat model is installed; name one as MODEL (a catalog id, "
            "a .gguf path or REMOTE/MODEL), or install one with 'edgedesk "
            "models pull glm-4-9b-0414' or 'edgedesk models import FILE'",
            param="model",
        )
    if len(found) > 1:
        print(
            f"using {shown(found[0])} (also installed: "
            f"{', '.join(shown(f) for f in found[1:])}; name one as MODEL)",
            file=sys.stderr,
        )
    return found[0]


def check_collection(ctx: ChatHere, name: str) -> None:
    """InvalidRequest (2) naming the collections there are, unless ``name`` is one, or the
    'edgedesk models pull' to run when its catalog embedding model is not downloaded."""
    names = [c.name for c in ctx.library.collections()]
    if name not in names:
        there = ", ".join(shown(n) for n in names) if names else "none yet"
        raise InvalidRequest(
            f"no collection named '{shown(name)}' (collections: {there}; "
            "add one with 'edgedesk docs add PATH --collection NAME')",
            param="collection",
        )
    missing = missing_embedding_model(ctx.library, ctx.resolver, name)
    if missing:
        raise InvalidRequest(EmbeddingModelMissing(name, missing).message, param="collection")


class TerminalChat:
    """One terminal conversation over ``ChatCore``.

    Runs on the main thread only: the core's blocking turn too, with SIGINT turned into
    the answer's cancel event while it streams (Ctrl-C stops the answer, not the chat).
    """

    def __init__(
        self, ctx: ChatHere, chat: Conversation, *, yes_tools: Collection[str] = ()
    ) -> None:
        self.ctx = ctx
        self.saver = ChatSaver(ctx.chat_store)
        # A collection whose catalog embedding model is missing: a message naming the
        # 'edgedesk models pull' to run, with the collection, before anything is embedded.
        self.core = ChatCore(
            ctx.scheduler,
            self.saver,
            search=self._search,
            thinks=self._thinks,
            missing=self._missing,
            tools=ctx.toolbox,
            preapproved=yes_tools,
            sees=lambda ref: model_sees(ctx.resolver, ref),
            image_limits=ctx.image_limits,
        )
        self.chat = chat
        self.pictures: list[Attachment] = []  # /image: they go with the next message
        self._in_reasoning = False
        self._lines: Iterator[str | None] | None = None  # the input, for tool approvals
        self._approve = terminal_approver(lambda: self._lines)

    def _thinks(self, ref: str) -> bool:
        return model_thinks(self.ctx.catalog, self.ctx.resolver, ref)

    def _missing(self, collection: str) -> str | None:
        return missing_embedding_model(self.ctx.library, self.ctx.resolver, collection)

    def _search(self, question: str, collections: Sequence[str]) -> list[Hit]:
        return self.ctx.searcher.search(question, list(collections), k=SOURCES_K)

    def loop(self, lines: Iterator[str | None]) -> None:
        """Handle lines until /quit or their end; None (Ctrl-C) twice in a row quits."""
        interrupted = False
        lines = iter(lines)
        self._lines = lines  # a tool approval reads its answer from the next line
        for line in lines:
            if line is None:
                if interrupted:
                    print(file=sys.stderr)
                    return
                interrupted = True
                print("\n(Ctrl-C again or /quit to leave)", file=sys.stderr)
                continue
            interrupted = False
            try:
                if not self.handle(line):
                    return
            except EdgeDeskError as exc:
                print(f"edgedesk: error: {shown(exc.message, 2000)}", file=sys.stderr)

    def handle(self, line: str) -> bool:
        """Send a message or run a slash command; False for /quit."""
        text = line.strip()
        if not text:
            return True
        if text.startswith("/") and not text.startswith("//"):
            name, _, arg = text[1:].partition(" ")
            return self.command(name.lower(), arg.strip())
        # The pictures stay attached when the question is refused (another model, say).
        pending = self.core.ask(
            self.chat, text[1:] if text.startswith("//") else text, attachments=self.pictures
        )
        self.pictures = []
        self.answer(pending)
        return True

    def command(self, name: str, arg: str) -> bool:
        """Run one slash command; False for /quit."""
        chat = self.chat
        if name in {"quit", "exit", "q"}:
            return False
        if name == "help":
            print(HELP, file=sys.stderr)
        elif name == "new":
            self.chat = Conversation(
                model=chat.model,
                system_prompt=chat.system_prompt,
                ephemeral=chat.ephemeral,
                collection=chat.collection,
                temperature=chat.temperature,
                max_tokens=chat.max_tokens,
                think=chat.think,
            )
            print("(new chat)", file=sys.stderr)
        elif name == "regenerate":
            self.answer(self.core.regenerate(chat))
        elif name == "model":
            if not arg:
                raise InvalidRequest(f"/model needs an id; this chat uses {shown(chat.model)}")
            chat.model = check_model(self.ctx, model_ref(arg))
            print(f"(model: {shown(chat.model)})", file=sys.stderr)
        elif name == "collection":
            if arg:
                check_collection(self.ctx, arg)
            chat.collection = arg
            self.saver.set_collection(chat)
            print(f"(grounded in {shown(arg)})" if arg else "(not grounded)", file=sys.stderr)
        elif name == "image":
            self._image(arg)
        elif name == "think":
            self._think(arg.lower())
        elif name == "save":
            self._save()
        else:
            raise InvalidRequest(f"unknown command /{shown(name)}; /help lists them")
        return True

    def _image(self, arg: str) -> None:
        """Attach the picture at ``arg`` to the next message (none: list those attached)."""
        if not arg:
            names = ", ".join(shown(p.name) for p in self.pictures)
            print(
                f"(attached to your next message: {names})"
                if names
                else "(no picture attached; /image PATH attaches one)",
                file=sys.stderr,
            )
            return
        path = user_path(arg)
        if not path.is_file():
            raise InvalidRequest(
                f"/image {shown(arg)}: no such file"
                + (" (it is a folder)" if path.is_dir() else "")
            )
        self.core.check_sees(self.chat.model)  # before reading: a text-only model never sees
        item = from_path(path, self.core.image_limits)
        if item.kind != "image":
            raise InvalidRequest(
                f"/image {shown(arg)}: not a picture (PNG, JPEG, GIF, BMP or WebP)"
            )
        self.pictures.append(item)
        print(f"({shown(item.name)} goes with your next message)", file=sys.stderr)

    def _think(self, arg: str) -> None:
        chat = self.chat
        if arg not in {"", "on", "off"}:
            raise InvalidRequest(f"/think takes on or off, not '{shown(arg)}'")
        if arg:
            chat.think = arg == "on"
            self.saver.set_think(chat)
        state = "on" if chat.think else "off (answers at once)"
        aside = (
            "" if self._thinks(chat.model) else f"; {shown(chat.model)} does not think first anyway"
        )
        print(f"(thinking {state}{aside})", file=sys.stderr)

    def _save(self) -> None:
        chat = self.chat
        if not chat.turns:
            print("(nothing to save yet)", file=sys.stderr)
            return
        self.saver.keep(chat)
        print(
            f"(saved as chat {chat.store_id}: {shown(chat.title)}; see 'edgedesk chats list')",
            file=sys.stderr,
        )

    def answer(self, pending: PendingTurn) -> None:
        """Stream the answer (Ctrl-C stops it), then list its sources."""
        cancel = threading.Event()
        self._in_reasoning = False
        try:
            with interrupt_sets(cancel):
                turn = self.core.run(pending, self._show, cancel, approve=self._approve)
        except EdgeDeskError:
            # The words that came are kept and saved as broken off; the error follows them.
            if pending.answer.content or pending.answer.reasoning:
                self._end_lines()
                print("(broken off)", file=sys.stderr)
            raise
        self._end_lines()
        for step in turn.tool_steps:
            for outcome in step.results:
                print(f"(tool {shown(outcome.name)}: {outcome.status})", file=sys.stderr)
        if turn.finish_reason == "cancelled":
            print("(stopped)", file=sys.stderr)
        if turn.citations:
            print("Sources:" if was_cited(turn) else "Sources given (none cited):")
            for c in turn.citations:
                print(f"[{c.number}] {shown(c.location, 500)}")
        sys.stdout.flush()

    def _end_lines(self) -> None:
        if self._in_reasoning:
            print(file=sys.stderr)
            self._in_reasoning = False
        sys.stdout.write("\n")
        sys.stdout.flush()

    def _show(self, chunk: Delta) -> None:
        if chunk.reasoning:
            if not self._in_reasoning:
                print("[thinking] ", end="", file=sys.stderr)
                self._in_reasoning = True
            print(chunk.reasoning, end="", file=sys.stderr, flush=True)
        if chunk.text:
            if self._in_reasoning:
                print(file=sys.stderr)
                self._in_reasoning = False
            sys.stdout.write(chunk.text)
            sys.stdout.flush()
