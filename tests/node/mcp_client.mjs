// One MCP client session of the TypeScript SDK (@modelcontextprotocol/sdk), driven line by line
// from a test: each line on stdin is a call {"tool": NAME, "arguments": {...}}, each line on
// stdout its outcome, {"result": CallToolResult} or, when the SDK's client throws (as it does
// for structured content that does not match the tool's outputSchema), {"thrown": {...}}.
//
//   node mcp_client.mjs stdio COMMAND ARG...   (the server's working directory: TASKFS_REPO)
//   node mcp_client.mjs http URL
//
// The first line out is {"tools": [NAME...]} once the session is initialized and the tools are
// listed (listing is what makes the client check every later answer against its schema).
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, ...rest] = process.argv.slice(2);
const transport =
  mode === 'http'
    ? new StreamableHTTPClientTransport(new URL(rest[0]))
    : new StdioClientTransport({
        command: rest[0],
        args: rest.slice(1),
        cwd: process.env.TASKFS_REPO,
        env: { ...process.env },
        stderr: 'inherit',
      });

const client = new Client({ name: 'taskfs-tests', version: '1.0.0' });
const say = (doc) => process.stdout.write(JSON.stringify(doc) + '\n');

await client.connect(transport);
const listed = await client.listTools();
say({ tools: listed.tools.map((t) => t.name) });

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { tool, arguments: args } = JSON.parse(line);
  try {
    say({ result: await client.callTool({ name: tool, arguments: args ?? {} }) });
  } catch (error) {
    say({ thrown: { name: error?.name, code: error?.code, message: String(error?.message ?? error) } });
  }
}
await client.close();
