"""Run the Hubitat simulator on its own: python -m simulators.hubitat --port P --devices N."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from ..base import on_startup, run_standalone, standalone_parser
from .server import HUB, OPTIONS, create_app, mcp_path


def _activity(
    app: web.Application, every: float
) -> Callable[[web.Application], AsyncIterator[None]]:
    """A background task that makes the house look alive for demos."""

    async def _ctx(_: web.Application) -> AsyncIterator[None]:
        async def _run() -> None:
            while True:
                await asyncio.sleep(every)
                app[HUB].random_activity(1)

        task = asyncio.create_task(_run())
        yield
        task.cancel()

    return _ctx


def main() -> None:
    """Run the simulated hub on its own (`python -m simulators.hubitat`); simulator entry point, no
    upstream counterpart.
    """
    parser = standalone_parser("Simulated Hubitat hub with the MCP Rule Server app", 8081)
    parser.add_argument("--devices", type=int, default=40, help="number of selected devices")
    parser.add_argument("--token", default="sim-token", help="the app's access token")
    parser.add_argument("--app-id", default="42")
    parser.add_argument("--hub-name", default="Home Hub")
    parser.add_argument("--flat", action="store_true", help="list every tool (gateways off)")
    parser.add_argument("--no-gate", action="store_true", help="switch the write-key gate off")
    parser.add_argument("--command-delay", type=float, default=0.1, help="seconds")
    parser.add_argument("--write-cap", type=int, default=2)
    parser.add_argument("--structured", action="store_true", help="add structuredContent")
    parser.add_argument(
        "--activity", type=float, default=0.0, help="seconds between random device changes"
    )
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost"):
        parser.error("the simulator binds loopback only")
    app = create_app(
        devices=args.devices,
        seed=args.seed,
        token=args.token,
        app_id=args.app_id,
        hub_name=args.hub_name,
        gateways=not args.flat,
        best_practice_gate=not args.no_gate,
        command_delay=args.command_delay,
        write_cap=args.write_cap,
        structured_content=args.structured,
    )
    options = app[OPTIONS]

    async def _endpoint(_: web.Application) -> None:
        url = f"http://{args.host}:{args.port}{mcp_path(options.app_id)}"
        print(f"Hubitat MCP endpoint: {url}?access_token={options.token}", flush=True)

    on_startup(app, _endpoint)
    if args.activity > 0:
        app.cleanup_ctx.append(_activity(app, args.activity))
    run_standalone(app, args.host, args.port, "Hubitat simulator")


if __name__ == "__main__":
    main()
