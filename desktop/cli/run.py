"""``edgedesk run MODEL PROMPT``: stream one answer to the terminal."""

from __future__ import annotations

import argparse
import sys
import threading

from desktop.base.config import user_path
from desktop.base.crash import shown
from desktop.base.errors import InvalidRequest, TemplateMissing
from desktop.chat import takes_pictures
from desktop.cli.arguments import context_for, text_arg
from desktop.cli.options import check_sampling, moe_settings
from desktop.engine import (
    DEFAULT_LIMITS,
    ChatCall,
    Delta,
    GenerationParams,
    Image,
    ImageLimits,
    Message,
)
from desktop.resolve import ModelResolver
from desktop.server import check_images, image_from_bytes
from desktop.server import marked_content as joined


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` verb."""
    from desktop.cli.options import common_options, moe_options, sampling_options

    parser = sub.add_parser(
        "run",
        parents=[common_options(), moe_options()],
        help="stream an answer from a model",
        description="Stream an answer from MODEL (a catalog id or a .gguf path) to PROMPT.",
    )
    parser.add_argument("model", metavar="MODEL")
    parser.add_argument(
        "prompt",
        metavar="PROMPT",
        type=text_arg,
        help="what to ask; - reads it from standard input (for long prompts)",
    )
    parser.add_argument("--system", metavar="S", type=text_arg, help="system prompt")
    parser.add_argument(
        "--image",
        metavar="FILE",
        action="append",
        default=[],
        help="a picture (PNG, JPEG, GIF, BMP) the model looks at with the "
        "prompt; repeat for more (needs a vision model)",
    )
    sampling_options(parser, max_tokens=512, temperature=0.8)
    parser.add_argument("--seed", type=int, default=None, metavar="S")
    parser.add_argument(
        "--ctx",
        type=int,
        default=None,
        metavar="N",
        help="context length (default: fitted to this machine)",
    )
    parser.add_argument(
        "--raw", action="store_true", help="send PROMPT as plain text completion, no chat template"
    )
    parser.add_argument(
        "--no-think",
        action="store_true",
        help="ask a reasoning model to answer without thinking first "
        "(sets the chat template's enable_thinking to false)",
    )
    parser.add_argument(
        "--stats", action="store_true", help="print token counts and speed to stderr at the end"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the verb; returns the exit code."""
    check_sampling(args)
    if args.no_think and args.raw:
        raise InvalidRequest("--no-think needs the chat template; it cannot go with --raw")
    if args.image and args.raw:
        raise InvalidRequest("--image needs the chat template; it cannot go with --raw")
    if args.ctx is not None and not 256 <= args.ctx <= 1_048_576:
        raise InvalidRequest(f"--ctx {args.ctx} is out of range; use 256 to 1048576 tokens")
    prompt = read_prompt(args.prompt)
    if not prompt.strip() and args.raw:
        raise InvalidRequest(
            "the prompt is empty; --raw continues a text, so give one "
            "(or - to read it from standard input)"
        )
    settings = {"engine.context_length": args.ctx} if args.ctx else {}
    ctx = context_for(args, {**settings, **moe_settings(args)})
    try:  # a bad picture stops before any load, under the caps in force (policy too)
        images = [read_image(path, ctx.image_limits) for path in args.image]
    except BaseException:
        ctx.close()
        raise
    params = GenerationParams(
        max_tokens=args.max_tokens, temperature=args.temperature, seed=args.seed
    )
    cancel = threading.Event()
    try:
        require_chat_model(ctx.resolver, args.model)
        if args.raw:
            stream = ctx.scheduler.stream_completion(args.model, prompt, params, cancel)
        else:
            text, pictures = joined([*images, prompt], "\n") if images else (prompt, ())
            messages = [Message("user", text, images=pictures)]
            check_images(messages, model=args.model, sees=lambda m: sees(ctx.resolver, m))
            if args.system:
                messages.insert(0, Message("system", args.system))
            call = ChatCall.of(
                messages,
                params,
                template_kwargs={"enable_thinking": False} if args.no_think else None,
            )
            stream = ctx.scheduler.stream_chat(args.model, call, cancel)
        final = _print_stream(stream)
    except TemplateMissing as exc:
        # The engine's words fit every caller; only this command has --raw to offer.
        raise TemplateMissing(
            f"{exc.message}, or use --raw for plain text completion",
            kind=exc.kind,
            params=exc.params,
        ) from None
    except KeyboardInterrupt:
        cancel.set()
        raise
    finally:
        ctx.close()
    if args.stats and final is not None and final.usage and final.timings:
        # Where a local model ran ("19/19 layers on Vulkan0 (llvmpipe)", "CPU only").
        where = f", {final.placement.describe()}" if final.placement is not None else ""
        print(
            f"[{final.usage.prompt_tokens} prompt + {final.usage.completion_tokens} generated "
            f"tokens, {final.tokens_per_s:.1f} tok/s, first token after "
            f"{final.timings.time_to_first_token_s * 1000:.0f} ms, "
            f"finish: {final.finish_reason}{where}]",
            file=sys.stderr,
        )
    return 0


MAX_STDIN_PROMPT = 64 * 1024 * 1024  # far beyond any context window; a runaway pipe stops


def read_prompt(prompt: str) -> str:
    """The prompt: ``-`` reads standard input (no 128 KB argument limit), else as given."""
    if prompt != "-":
        return prompt
    if sys.stdin is None or sys.stdin.isatty():
        print(
            "edgedesk: reading the prompt from standard input; end it with Ctrl+D", file=sys.stderr
        )
    if sys.stdin is None:
        return ""
    data = sys.stdin.buffer.read(MAX_STDIN_PROMPT + 1)
    if len(data) > MAX_STDIN_PROMPT:
        raise InvalidRequest(
            f"the prompt on standard input is over "
            f"{MAX_STDIN_PROMPT // 2**20} MiB; no model's context holds it"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidRequest("the prompt on standard input is not UTF-8 text") from None


MAX_IMAGE_FILE = 64 * 1024 * 1024  # read no further: a picture this size is a mistake


def read_image(name: str, limits: ImageLimits = DEFAULT_LIMITS) -> Image:
    """The picture in file ``name``, or a one-line error: missing, unreadable, not a
    picture, over ``limits`` (the context's ``image_limits``)."""
    path = user_path(name)
    if not path.is_file():
        raise InvalidRequest(
            f"--image {shown(name)}: no such file" + (" (it is a folder)" if path.is_dir() else "")
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_IMAGE_FILE + 1)
    except OSError as exc:
        raise InvalidRequest(f"--image {shown(name)}: cannot be read ({exc.strerror})") from None
    if len(data) > MAX_IMAGE_FILE:
        raise InvalidRequest(
            f"--image {shown(name)}: the file is over "
            f"{MAX_IMAGE_FILE // 2**20} MiB; send a smaller picture"
        )
    return image_from_bytes(data, where=f"--image {shown(name)}", param="image", limits=limits)


def sees(resolver: ModelResolver, model: str) -> bool:
    """Whether pictures may go to ``model`` (``chat.capabilities.takes_pictures``: a vision
    projector, or a remote model, whose server decides)."""
    return takes_pictures(resolver(model))


def require_chat_model(resolver: ModelResolver, model: str) -> None:
    """Refuse an embedding or reranking model before the engine is asked to generate."""
    spec = resolver(model)
    if spec.kind != "chat":
        article = "an" if spec.kind[0] in "aeiou" else "a"
        raise InvalidRequest(
            f"{shown(model)} is {article} {spec.kind} model and cannot write "
            "answers; 'run' needs a chat model (see 'edgedesk models "
            "list')",
            param="model",
        )


def _print_stream(stream: object) -> Delta | None:
    final: Delta | None = None
    in_reasoning = wrote = False
    out = sys.stdout
    try:
        for chunk in stream:  # type: ignore[attr-defined]
            if chunk.reasoning:
                if not in_reasoning:
                    print("[thinking] ", end="", file=sys.stderr)
                    in_reasoning = True
                print(chunk.reasoning, end="", file=sys.stderr, flush=True)
            if chunk.text:
                out.write(chunk.text)
                out.flush()
                wrote = True
            if chunk.is_final:
                final = chunk
    except BaseException:
        if wrote:  # the model failed mid-answer: the error line gets a line of its own
            out.write("\n")
            out.flush()
        if in_reasoning:
            print(file=sys.stderr)
        raise
    out.write("\n")
    return final
