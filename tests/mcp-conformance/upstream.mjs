// An upstream MCP server for the gateway's conformance run (stdio): the
// suite's fixture tools whose results Iris's own tools never make (audio,
// an embedded resource, mixed content), served with the TypeScript SDK the
// suite itself pins (package-lock.json). The gateway serves them under
// their own names, so the suite's scenarios pass through it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

// A 44-byte WAV header with no samples, and a one-pixel PNG.
const WAV = Buffer.from(
  'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=',
  'base64',
).toString('base64');
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const server = new McpServer({ name: 'upstream-fixtures', version: '1.0.0' });

server.registerTool(
  'test_audio_content',
  { description: 'Return a short audio clip.' },
  async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
);

server.registerTool(
  'test_embedded_resource',
  { description: 'Return an embedded text resource.' },
  async () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }),
);

server.registerTool(
  'test_multiple_content_types',
  { description: 'Return text, an image and an embedded resource.' },
  async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
      },
    ],
  }),
);

await server.connect(new StdioServerTransport());
