"""Run the Homecast simulator on its own: `python -m simulators.homecast --port 8766`."""

from __future__ import annotations

from simulators.base import run_standalone, standalone_parser

from .server import create_app


def main() -> None:
    """Parse the options and serve until interrupted (loopback only).

    Simulator entry point (`python -m`), no upstream counterpart.
    """
    parser = standalone_parser("Homecast MCP simulator (cloud, or --community)", 8766)
    parser.add_argument("--homes", type=int, default=2, help="generated homes")
    parser.add_argument("--accessories", type=int, default=24, help="accessories per home")
    parser.add_argument("--state", help="serve homes from a get_state-shaped JSON file")
    parser.add_argument("--legacy", action="store_true", help="older raw value vocabulary")
    parser.add_argument("--json", action="store_true", help="plain JSON answers instead of SSE")
    parser.add_argument("--no-sessions", action="store_true", help="no Mcp-Session-Id")
    parser.add_argument("--write-delay", type=float, default=0.2, help="seconds until writes land")
    parser.add_argument("--token", default="hc_test_token", help="accepted hc_ access token")
    parser.add_argument(
        "--community", action="store_true", help="the Homecast Mac app's community server"
    )
    parser.add_argument(
        "--no-auth", action="store_true", help="community server with authentication off"
    )
    args = parser.parse_args()
    if args.host != "127.0.0.1":
        parser.error("the simulator binds 127.0.0.1 only")
    app = create_app(
        seed=args.seed,
        homes=args.homes,
        accessories_per_home=args.accessories,
        state_file=args.state,
        vocabulary="legacy" if args.legacy else "current",
        sse=not args.json,
        sessions=not args.no_sessions,
        write_delay=args.write_delay,
        token=args.token,
        community=args.community,
        community_auth=not args.no_auth,
    )
    run_standalone(app, args.host, args.port, "Homecast simulator")


if __name__ == "__main__":
    main()
