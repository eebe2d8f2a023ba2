"""``tracemill map``: the failure map's situations (or its pair cells), worst first.

By default the map is the stored one: the latest model version against the version
before it, as the last processing computed it. ``--since VERSION`` compares the latest
version with ``VERSION`` instead (as ``report --since`` does): the map is computed again
inside a transaction that is rolled back (:func:`compared_with`), so the stored map,
which ``serve``, ``generate`` and the page read, keeps comparing the latest two. The
admin API answers the same records at ``GET /map?since=VERSION``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from processor.conversation_commands import conversations_by_id
from processor.process_commands import process_remote, processed, redactor_of, say
from tracemill.config import Settings
from tracemill.errors import StoreLockedError

__all__ = ["add_map_command", "compared_with", "read_map"]

Options = Callable[[argparse.ArgumentParser], None]


def add_map_command(commands: Any, processing: Options) -> None:
    """Add ``map`` to the subcommand parsers."""
    fmap = commands.add_parser(
        "map", help="Print the failure map: situations by status, worst first.",
        description="A situation is the smallest set of coordinates that isolates one group "
                    "of failing conversations. Each is new, persistent, fixed or uncertain "
                    "between the latest model version and the previous one (or the version "
                    "named with --since), with fail rates, 95% intervals and the reason. "
                    "--json prints one record per situation (the same records a running "
                    "`tracemill serve` answers at /api/v1/map).")
    processing(fmap)
    fmap.add_argument("--json", action="store_true",
                      help="Print the records as JSON (situations, or cells with --cells).")
    fmap.add_argument("--since", metavar="VERSION",
                      help="Compare the latest model version with this one instead of the "
                           "version before it (the stored map is left as it is).")
    fmap.add_argument("--situation", metavar="ID",
                      help="Show one situation with its example conversations.")
    fmap.add_argument("--conversations", action="store_true",
                      help="With --situation: list every member conversation id.")
    fmap.add_argument("--cells", action="store_true",
                      help="Print the pair cells behind the situations instead.")
    fmap.add_argument("--all", action="store_true",
                      help="With --cells: include passing cells.")
    fmap.add_argument("--http-address", metavar="HOST:PORT",
                      help="OTLP/HTTP address of a running service that holds the store "
                           "(only needed when it wrote no service file beside the store; "
                           "its admin API is taken to be on the next port).")
    fmap.add_argument("--api-address", metavar="HOST:PORT",
                      help="Admin API address of a running service that holds the store "
                           "(only needed when it wrote no service file beside the store).")
    fmap.add_argument("--limit", type=int, default=40, metavar="N",
                      help="Most situations or cells to print as text (default 40).")
    fmap.set_defaults(handler=_map)


@contextmanager
def compared_with(cursor: Any, options: Any, since: str | None) -> Iterator[Any]:
    """Inside the block, the map tables of ``cursor``'s connection hold the map of the
    latest model version against ``since`` (None: the version before it, computed
    afresh); the transaction is rolled back on the way out, leaving the stored map as it
    was. Yields the :class:`~processor.failure_map.Periods` compared. Raises
    :class:`~processor.errors.UnknownVersion` when ``since`` is not a stored version."""
    from processor.failure_map import compute_map, store_map

    cursor.begin()
    try:
        computed = compute_map(cursor, options.exploration, baseline=since,
                               min_support=options.min_support)
        store_map(cursor, computed)
        yield computed.periods
    finally:
        cursor.rollback()


def read_map(cursor: Any, options: Any, since: str | None, *,
             cells: bool = False) -> tuple[list[Any], list[Any]]:
    """The map's situations and (with ``cells``) its pair cells: as stored, or with the
    latest version compared with ``since`` (see :func:`compared_with`)."""
    from processor.map_records import read_cells, read_situations

    if since is None:
        return read_situations(cursor), read_cells(cursor) if cells else []
    with compared_with(cursor, options, since):
        return read_situations(cursor), read_cells(cursor) if cells else []


def _map(args: argparse.Namespace, settings: Settings) -> int:
    from processor.conversation_records import read_conversations
    from processor.run import ProcessOptions

    examples: dict[str, list[Any]] = {}
    redact = redactor_of(settings)
    wants_examples = bool(args.situation and not args.conversations and not args.json)
    try:
        store, _ = processed(settings, args.environ)
    except StoreLockedError as locked:  # a running `serve` holds it: ask its API
        situations, cells = _map_from_api(args, settings, locked)
        if wants_examples:
            examples = {s.situation_id: conversations_by_id(settings, locked, s.examples)
                        for s in situations if s.situation_id == args.situation}
    else:
        try:
            cursor = store.cursor()
            try:
                situations, cells = read_map(cursor, ProcessOptions.from_settings(settings),
                                             args.since, cells=args.cells)
                if wants_examples:
                    examples = {s.situation_id: [
                        redact.model(record) for i in s.examples
                        for record in read_conversations(cursor, conversation_id=i, limit=1)]
                        for s in situations if s.situation_id == args.situation}
            finally:
                cursor.close()
        finally:
            store.close()
    if args.situation is not None:
        return _one_situation(args, situations, examples)
    if args.cells:
        shown_cells = [c for c in cells if args.all or c.status != "passing"]
        if args.json:
            say("[" + ",\n".join(c.model_dump_json(indent=2) for c in shown_cells) + "]")
        else:
            from processor.terminal import cells_table

            say(cells_table(shown_cells, args.limit))
        return 0
    if args.json:
        say("[" + ",\n".join(s.model_dump_json(indent=2) for s in situations) + "]")
        return 0
    from processor.terminal import situations_text

    say(situations_text(situations, args.limit))
    return 0


def _map_from_api(args: argparse.Namespace, settings: Settings,
                  locked: StoreLockedError) -> tuple[list[Any], list[Any]]:
    from processor.errors import UnknownVersion
    from processor.map_records import CellRecord, SituationRecord
    from tracemill.collector_client import ApiNotFound, ask_api

    process_remote(settings, locked)
    params = {"since": args.since}
    try:
        situations = [SituationRecord(**s) for s in ask_api(settings, "/map", locked,
                                                            params=params)]
        cells = ([CellRecord(**c) for c in ask_api(settings, "/map/cells", locked,
                                                   params=params)]
                 if args.cells else [])
    except ApiNotFound as exc:  # an unknown --since version, as offline
        raise UnknownVersion(str(exc)) from None
    # on stderr: stdout is the same as offline, for scripts and for `diff`
    print("tracemill map: from the running collector (`tracemill serve`, processed "
          "just now)", file=sys.stderr)
    return situations, cells


def _one_situation(args: argparse.Namespace, situations: list[Any],
                   examples: dict[str, list[Any]]) -> int:
    from processor.errors import UnknownSituation
    from processor.terminal import situation_text

    found = [s for s in situations if s.situation_id == args.situation]
    if not found:
        known = ", ".join(s.situation_id for s in situations[:10]) or "none"
        raise UnknownSituation(
            f"no situation {args.situation!r} in the failure map (ids change only with their "
            f"coordinates); known: {known}; `tracemill map` lists them")
    situation = found[0]
    if args.conversations:
        if args.json:
            import json

            say(json.dumps(situation.member_ids))
        else:
            for conversation_id in situation.member_ids:
                say(conversation_id)
        return 0
    if args.json:
        say(situation.model_dump_json(indent=2))
        return 0
    say(situation_text(situation, examples.get(situation.situation_id, [])))
    return 0
