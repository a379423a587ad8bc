// An upstream MCP server for the gateway's conformance run (stdio): the
// suite's fixture tools whose results Iris's own tools never make (audio,
// an embedded resource, mixed content) or that ask their caller while they
// run (elicitation, sampling), served with the TypeScript SDK the suite
// itself pins (package-lock.json). The gateway serves them under their own
// names, so the suite's scenarios pass through it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

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

// Tools that ask the person behind the call for input while they run: the
// gateway relays the request to its own client.

const asked = async (params) => {
  const answer = await server.server.elicitInput(params);
  return {
    content: [
      {
        type: 'text',
        text: `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`,
      },
    ],
  };
};

// Asks its caller for its roots (roots/list): through the gateway, the
// folder it serves, when the gateway has one to give.
server.registerTool(
  'list_roots',
  { description: "List the folders the caller gives as roots." },
  async () => {
    const { roots } = await server.server.listRoots();
    return { content: [{ type: 'text', text: roots.map((root) => root.uri).join('\n') || '(no roots)' }] };
  },
);

server.registerTool(
  'test_elicitation',
  {
    description: 'Ask the user for their name and email.',
    inputSchema: { message: z.string() },
  },
  async ({ message }) =>
    asked({
      message,
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    }),
);

server.registerTool(
  'test_elicitation_sep1034_defaults',
  { description: 'Ask with a default for every primitive type.' },
  async () =>
    asked({
      message: 'Confirm or change the defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', default: 'John Doe' },
          age: { type: 'integer', default: 30 },
          score: { type: 'number', default: 95.5 },
          status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', default: true },
        },
      },
    }),
);

server.registerTool(
  'test_elicitation_sep1330_enums',
  { description: 'Ask with every kind of enum.' },
  async () =>
    asked({
      message: 'Pick the options',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
      },
    }),
);

server.registerTool(
  'test_sampling',
  {
    description: "Ask the client's model to complete a prompt.",
    inputSchema: { prompt: z.string() },
  },
  async ({ prompt }) => {
    const answer = await server.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
      maxTokens: 100,
    });
    const said = answer.content?.type === 'text' ? answer.content.text : JSON.stringify(answer.content);
    return { content: [{ type: 'text', text: `LLM response: ${said}` }] };
  },
);

// Not a suite fixture: a tool that asks only after a while, so that the
// gateway can give up on its call first.
server.registerTool(
  'ask_later',
  { description: 'Wait, then ask the user.', inputSchema: { tag: z.string() } },
  async ({ tag }) => {
    await new Promise((done) => setTimeout(done, 1500));
    try {
      await server.server.elicitInput({
        message: `asked later: ${tag}`,
        requestedSchema: { type: 'object', properties: { username: { type: 'string' } } },
      });
      return { content: [{ type: 'text', text: 'answered' }] };
    } catch (error) {
      return { content: [{ type: 'text', text: `not asked: ${error.message}` }] };
    }
  },
);

// Not a suite fixture: a server that keeps asking, to show the gateway
// bounds how often one call may ask its person.
server.registerTool(
  'ask_repeatedly',
  { description: 'Ask the user twelve times over.' },
  async () => {
    let answered = 0;
    try {
      for (let i = 0; i < 12; i += 1) {
        await server.server.elicitInput({
          message: `Question ${i + 1}`,
          requestedSchema: {
            type: 'object',
            properties: { username: { type: 'string' }, email: { type: 'string' } },
          },
        });
        answered += 1;
      }
      return { content: [{ type: 'text', text: `answered ${answered} times` }] };
    } catch (error) {
      return { content: [{ type: 'text', text: `answered ${answered} times, then: ${error.message}` }] };
    }
  },
);

await server.connect(new StdioServerTransport());
