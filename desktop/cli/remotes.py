"""``edgedesk remotes add|list|test|rm``: an organization's serving engines as models here."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from desktop.base.errors import InvalidRequest, ModelNotFound
from desktop.base.net import NetGate
from desktop.cli.arguments import context_for


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``remotes`` verb group."""
    from desktop.cli.options import common_options

    remotes = sub.add_parser(
        "remotes",
        parents=[common_options()],
        help="remote engines (vLLM, SGLang, llama-server, Ollama) as models",
    )
    rsub = remotes.add_subparsers(dest="remotes_verb", metavar="ACTION", required=True)
    add = rsub.add_parser(
        "add", parents=[common_options()], help="add a remote by its OpenAI-compatible base URL"
    )
    add.add_argument("name", metavar="NAME")
    add.add_argument("url", metavar="URL", help="e.g. http://gpu-01:8000/v1 (/v1 optional)")
    add.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="read the remote's API key from standard input (kept in the OS keyring only)",
    )
    add.set_defaults(handler=handle_add)
    listing = rsub.add_parser("list", parents=[common_options()], help="configured remotes")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=handle_list)
    test = rsub.add_parser(
        "test", parents=[common_options()], help="connect to a remote and list its models"
    )
    test.add_argument("name", metavar="NAME")
    test.set_defaults(handler=handle_test)
    rm = rsub.add_parser("rm", parents=[common_options()], help="remove a remote and its key")
    rm.add_argument("name", metavar="NAME")
    rm.set_defaults(handler=handle_rm)


def handle_add(args: argparse.Namespace) -> int:
    """Store the remote (name and URL in remotes.json, the key in the keyring)."""
    from desktop.remote import keyring_set

    ctx = context_for(args)
    key = None
    if args.api_key_stdin:
        key = sys.stdin.readline().strip()
        if not key or any(c.isspace() for c in key):
            raise InvalidRequest("no API key on standard input (one line, no spaces)")
    policy = next((r for r in ctx.remote_registry.policy if r.name == args.name), None)
    if policy is not None:
        # IT names the endpoint; the user (or IT's script) only supplies their key.
        if not key:
            raise InvalidRequest(
                f"'{args.name}' is set by your organization; only its key can "
                "be stored, with --api-key-stdin"
            )
        keyring_set(policy.name, key)
        print(
            f"key for '{policy.name}' ({policy.base_url}, set by your organization) stored "
            "in the OS keyring; the URL given was not used"
        )
        return 0
    endpoint = ctx.remote_registry.add(args.name, args.url)
    if key:
        keyring_set(endpoint.name, key)
    print(
        f"added remote '{endpoint.name}' at {endpoint.base_url}"
        f"{' with its key in the OS keyring' if key else ''}; its models are named "
        f"{endpoint.name}/MODEL (see 'edgedesk remotes test {endpoint.name}')"
    )
    return 0


def handle_list(args: argparse.Namespace) -> int:
    """Print the remotes, who set them up, and whether a key is stored (never the key)."""
    ctx = context_for(args)
    registry = ctx.remote_registry
    rows = [
        {
            "name": r.name,
            "url": r.base_url,
            "source": r.source,
            "key_stored": registry.key(r.name) is not None,
        }
        for r in registry.all()
    ]
    if args.json:
        print(
            json.dumps(
                {
                    "remotes": rows,
                    "allow_user_remotes": registry.allow_user,
                    "offline": ctx.net.refusal() is not None,
                },
                indent=2,
            )
        )
        return 0
    if not rows:
        print("no remote engines; add one with 'edgedesk remotes add NAME URL'")
    for row in rows:
        print(
            f"{row['name']:<16} {row['url']:<40} {row['source']:<7} "
            f"{'key stored' if row['key_stored'] else 'no key'}"
        )
    if ctx.net.refusal() is not None:
        print("offline: remote engines are not used (ForceOffline or offline mode)")
    return 0


def handle_test(args: argparse.Namespace) -> int:
    """Ask the remote for its models (one logged call) and print them as NAME/MODEL."""
    from desktop.remote import list_models

    ctx = context_for(args)
    remote = ctx.remote_registry.get(args.name)
    if remote is None:
        raise ModelNotFound(f"no remote called '{args.name}'; see 'edgedesk remotes list'")
    models = list_models(
        remote, key=ctx.remote_registry.key(remote.name), net=ctx.net, transport=ctx.transport
    )
    print(f"{remote.name} ({remote.base_url}) answers with {len(models)} model(s):")
    for model in models:
        print(f"  {remote.name}/{model}")
    return 0


def handle_rm(args: argparse.Namespace) -> int:
    """Remove a user remote and its stored key."""
    from desktop.remote import keyring_delete

    ctx = context_for(args)
    removed = ctx.remote_registry.remove(args.name)
    keyring_delete(args.name)
    print(f"removed remote '{args.name}'" if removed else f"no remote called '{args.name}'")
    return 0 if removed else 3


def remote_rows(
    net: NetGate, listed: Callable[[], dict[str, list[str] | str]]
) -> list[dict[str, object]]:
    """Rows for ``edgedesk models list``: one per remote model (or why a remote is missing),
    from ``listed`` (each remote's NAME/MODEL ids, or why it could not be listed)."""
    rows: list[dict[str, object]] = []
    if net.refusal() is not None:
        return rows  # offline: no remote is asked, none is listed
    for name, ids in listed().items():
        if isinstance(ids, str):
            rows.append({"id": f"{name}/*", "kind": "remote", "remote": name, "error": ids})
            continue
        rows += [
            {
                "id": model_id,
                "kind": "chat",
                "remote": name,
                "location": f"runs on {name} — leaves this device",
            }
            for model_id in ids
        ]
    return rows
