// The official TypeScript MCP client against `tinycontext serve`: tools, save, recall, error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);
const client = new Client({ name: "tinycontext-e2e", version: "0" });
await client.connect(new StreamableHTTPClientTransport(url));
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const saved = await client.callTool({ name: "save_memories", arguments: {
  memories: [{ content: "The TypeScript client saved this on a Thursday." }] } });
const recalled = await client.callTool({ name: "recall_memories",
  arguments: { query: "What did the TypeScript client save?" } });
const missing = await client.callTool({ name: "get_memory",
  arguments: { memory_id: "0123456789ab" } });
await client.close();
console.log(JSON.stringify({ tools, saved: JSON.parse(saved.content[0].text),
  recall: recalled.content[0].text, error: missing.isError, errorText: missing.content[0].text }));
