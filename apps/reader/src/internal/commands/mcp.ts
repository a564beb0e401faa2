// `lake-reader mcp`: the MCP server over stdio, until the client closes stdin.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { text, type RunContext } from "@lake/cli";
import { COMMON, locations, usageError, type Io } from "../context.js";
import { readerCommand } from "./parse.js";

/** The agent id: --agent, else $LAKE_AGENT, else the host name — lower-cased, unsafe characters as "-". */
export function agentId(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const raw = flag || env.LAKE_AGENT || hostname();
  const id = raw.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "");
  if (!id) throw usageError(`mcp: agent id ${JSON.stringify(raw)} has no usable characters`);
  return id;
}

const MCP_OPTIONS = {
  ...COMMON,
  agent: text("ID", "this agent's id: its claims, roster entry, intents, and the default lease owner\n(default $LAKE_AGENT, else the host name)"),
} as const;

async function mcp({ values, io }: RunContext<typeof MCP_OPTIONS, Io>): Promise<number> {
  const loc = locations(values, io.env);
  const agent = agentId(values.agent, io.env);
  const version = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  // The SDK loads only for this command.
  const [{ createMcpServer }, { StdioServerTransport }] = await Promise.all([import("../mcp/server.js"), import("@modelcontextprotocol/sdk/server/stdio.js")]);
  const server = createMcpServer({ loc, agent, version, env: io.env });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => void server.close().finally(resolve));
  });
  await server.connect(transport);
  io.err(`lake-reader mcp: serving ${loc.store} as agent ${agent}\n`);
  await closed;
  return 0;
}

/** `lake-reader mcp`. */
export const mcpCommand = readerCommand({
  description: `A Model Context Protocol server on stdin/stdout (JSON-RPC), for agents: search, list_sessions,
show_session, usage, sql (read-only), propose_claim, roster, heartbeat, declare_intent,
lease_acquire, lease_renew, lease_release; resources lake://claims and
lake://sessions/{session}/transcript. Logs go to stderr. Tool errors carry the CLI's one-line
message and exit code. It exits 0 when the client closes the connection. Register it with an MCP
client, e.g.
  claude mcp add lake -- lake-reader mcp --store s3://bucket/fleet`,
  options: MCP_OPTIONS,
  run: mcp,
});
