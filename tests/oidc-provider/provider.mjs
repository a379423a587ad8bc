// A real OpenID provider on loopback for the gateway tests: oidc-provider
// with the client-credentials grant, the authorization-code grant for a
// native client (`cli`, signed in through the provider's development
// login and consent pages, which accept any name), resource indicators
// (JWT access tokens whose audience is the resource asked for; opaque ones
// for the client `dora`) and token introspection.
//
// Environment: PORT (the port to listen on), KEYS_DIR (where the signing
// key is kept), KEY_ID (its `kid`: a new id is a new key, which is how the
// tests rotate keys), TOKEN_TTL (seconds, default 300). Prints `ready` once
// it listens.
import { generateKeyPairSync, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const keysDir = process.env.KEYS_DIR;
const keyId = process.env.KEY_ID ?? 'first';
const ttl = Number(process.env.TOKEN_TTL ?? 300);
const issuer = `http://127.0.0.1:${port}`;

// The private key is kept as PEM beside the JWKS, so that the tests can
// sign tokens the way this issuer would (expired, not yet valid, and so on).
mkdirSync(keysDir, { recursive: true });
const pemPath = join(keysDir, `${keyId}.pem`);
if (!existsSync(pemPath)) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(pemPath, privateKey.export({ type: 'pkcs8', format: 'pem' }));
}
const privateKey = createPrivateKey(readFileSync(pemPath));
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: keyId, alg: 'RS256', use: 'sig' };
writeFileSync(join(keysDir, `${keyId}.public.pem`),
  createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }));

const client = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  ...(scope ? { scope } : {}),
});

const provider = new Provider(issuer, {
  clients: [
    client('alice', 'tools:read tools:write'),
    client('bob', 'tools:read tools:write'),
    client('carol', 'tools:read'),
    client('dora', 'tools:read'),
    // A gateway reaching an upstream MCP server with its own credentials
    // (sent in the request body, as MCP clients do).
    { ...client('relay', 'tools:read'), token_endpoint_auth_method: 'client_secret_post' },
    // The gateway's own credentials, for introspection.
    client('gateway'),
    // A person signing in from the command line (`iris login`): a public
    // native client with PKCE, sent back to any loopback port (RFC 8252).
    {
      client_id: 'cli',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
      scope: 'tools:read tools:write',
    },
  ],
  jwks: { keys: [jwk] },
  scopes: ['tools:read', 'tools:write'],
  ttl: { ClientCredentials: ttl },
  // A sign-in from the command line can be refreshed without the person.
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    // A client can withdraw its token (to show how long a gateway goes on
    // believing an introspection answer).
    revocation: { enabled: true },
    // Only the gateway asks about tokens.
    introspection: {
      enabled: true,
      allowedPolicy: (ctx, caller) => caller.clientId === 'gateway',
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource, client) => ({
        scope: 'tools:read tools:write',
        audience: resource,
        accessTokenTTL: ttl,
        accessTokenFormat: client.clientId === 'dora' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});
// Plain HTTP on loopback is what a test may use.
provider.proxy = false;

// How many introspection requests the provider has answered, for the tests
// that bound what junk tokens cost an issuer: `GET /test/introspections`.
let introspections = 0;
provider.use(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/test/introspections') {
    ctx.body = { count: introspections };
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/token/introspection') {
    introspections += 1;
  }
  await next();
});

provider.listen(port, '127.0.0.1', () => {
  process.stdout.write('ready\n');
});
