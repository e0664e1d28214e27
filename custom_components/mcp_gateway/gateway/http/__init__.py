"""The gateway's HTTP doors: Streamable HTTP, SSE, CORS, origins, OAuth metadata."""
