// Start `lake-reader mcp` (the built bin) as a child process and talk to it with the MCP SDK's
// client over stdio.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const BIN = fileURLToPath(new URL("../../bin/lake-reader.js", import.meta.url));

/** A tool's answer: its structured JSON, the text block, and whether it is an error. */
export interface ToolAnswer<T = Record<string, unknown>> {
  readonly isError: boolean;
  readonly json: T & { error?: { code: string; exit_code: number; message: string } };
  readonly text: string;
}

/** A connected client and a way to stop the server. */
export interface McpProcess {
  readonly client: Client;
  call<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<ToolAnswer<T>>;
  /** Every page of a paged tool, following next_cursor. */
  pages<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<(T & { next_cursor: string | null })[]>;
  close(): Promise<void>;
}

/** Start `lake-reader mcp ARGS…` with an environment (PATH and HOME are added). */
export async function startMcp(args: readonly string[], env: Record<string, string> = {}): Promise<McpProcess> {
  if (!existsSync(fileURLToPath(new URL("../../dist/cli.js", import.meta.url)))) throw new Error("lake-reader is not built: run `pnpm --filter lake-reader... build` first");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", ...args],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const client = new Client({ name: "lake-test", version: "0.0.0" });
  await client.connect(transport);
  const call = async <T>(name: string, a: Record<string, unknown> = {}): Promise<ToolAnswer<T>> => {
    const r = (await client.callTool({ name, arguments: a })) as { isError?: boolean; structuredContent?: unknown; content?: { type: string; text?: string }[] };
    const text = r.content?.find((c) => c.type === "text")?.text ?? "";
    if (r.structuredContent === undefined) throw new Error(`${name}: no structured content (${text}); server stderr: ${stderr}`);
    return { isError: r.isError === true, json: r.structuredContent as ToolAnswer<T>["json"], text };
  };
  return {
    client,
    call,
    async pages<T>(name: string, a: Record<string, unknown>) {
      const out: (T & { next_cursor: string | null })[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10_000; i++) {
        const r = await call<T & { next_cursor: string | null }>(name, cursor === undefined ? a : { ...a, cursor });
        if (r.isError) throw new Error(`${name}: ${r.text}`);
        out.push(r.json);
        if (r.json.next_cursor === null) return out;
        cursor = r.json.next_cursor;
      }
      throw new Error(`${name}: more than 10000 pages`);
    },
    async close() {
      await client.close();
    },
  };
}
