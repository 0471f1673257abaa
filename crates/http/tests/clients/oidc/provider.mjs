// A real OpenID Connect provider on loopback for s3hpc's AssumeRoleWithWebIdentity
// tests: the `oidc-provider` package from npm, unmodified, with its own
// authorization code flow, its own signing (RS256, a key made at start) and its
// own discovery and JWKS endpoints. No mock anywhere.
//
// INSTALL (node_modules never goes into the repository: install into a
// directory the caller owns, e.g. target/oidc, from the pinned lock file):
//
//   here=crates/http/tests/clients/oidc
//   mkdir -p target/oidc
//   cp $here/package.json $here/package-lock.json target/oidc/
//   npm ci --prefix target/oidc --no-audit --no-fund
//
// RUN (either form; NODE_PATH is honoured by this script itself, since Node's
// own ESM `import` ignores NODE_PATH):
//
//   NODE_PATH=target/oidc/node_modules node $here/provider.mjs \
//       --port 0 --out DIR --users alice,bob --ttl 300
//   # or: cp $here/provider.mjs target/oidc/ && node target/oidc/provider.mjs ...
//
// ARGUMENTS
//   --port P      listen on 127.0.0.1:P (0: any free port); the issuer is
//                 exactly `http://127.0.0.1:P` (no trailing slash)
//   --out DIR     where the tokens go (made if missing)
//   --users LIST  comma-separated user names (default alice,bob)
//   --ttl S       ID token lifetime in seconds (default 300)
//
// WHAT IT DOES
//   Two registered clients: `s3hpc` and `other` (a token for "another
//   audience"). For every client and user it runs the provider's genuine
//   authorization code flow over HTTP on loopback (GET /auth, the dev login
//   form and the consent form submitted with cookies like a browser would,
//   POST /token with client_secret_basic and PKCE S256) and writes the ID
//   token it gets to DIR/<client>-<user>.jwt (no trailing newline). The
//   ID token: header {"alg":"RS256","kid":K} (K = the kid of the one key at
//   /jwks, a fresh RSA 2048 key each run; no "typ"), payload {sub,
//   preferred_username, nonce, aud, exp, iat, iss} with sub =
//   preferred_username = the user name, aud = the client id (a string),
//   iss = the issuer, exp = iat + ttl.
//   It also writes DIR/issuer (the issuer URL, no newline), then prints the
//   single line `ready` on stdout and keeps serving (discovery at
//   /.well-known/openid-configuration, JWKS at /jwks, the rest of the
//   provider) until SIGTERM or SIGINT, on which it exits 0.
//   If the tokens are not all written within 30 s it exits 1 with the reason
//   on stderr. All diagnostics go to stderr; stdout carries only `ready`.
//
// NOTES
//   Plain http on loopback needs no special setting in oidc-provider 9: an
//   http issuer is accepted, cookies are not marked Secure on an http request,
//   and http redirect URIs are refused only for implicit-flow clients. Its
//   stderr warnings (in-memory adapter, devInteractions, and "Unsupported
//   runtime" on Node 20, which it only warns about) are expected.
//   The `profile` claims are put into the ID token with conformIdTokenClaims:
//   false (by default a code-flow ID token would carry only `sub`).
//   One --ttl for every token: a test that needs both a live and an expired
//   token waits out a short ttl, or starts a second provider.

import { createServer } from 'node:http';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';

// oidc-provider prints notices with console.info (stdout); keep stdout for `ready`.
console.info = console.error;
console.log = console.error;

const fail = (msg) => {
  console.error(`oidc provider: ${msg}`);
  process.exit(1);
};

const deadline = setTimeout(() => fail('no tokens within 30 s'), 30_000);

// ---- arguments
const args = { port: null, out: null, users: 'alice,bob', ttl: '300' };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 1) {
    const m = /^--(port|out|users|ttl)(?:=(.*))?$/.exec(argv[i]);
    if (!m) fail(`unknown argument ${argv[i]}`);
    const value = m[2] ?? argv[(i += 1)];
    if (value === undefined) fail(`--${m[1]} needs a value`);
    args[m[1]] = value;
  }
}
if (args.port === null || !/^\d+$/.test(args.port) || Number(args.port) > 65535) fail('--port P is required (0..65535)');
if (!args.out) fail('--out DIR is required');
if (!/^\d+$/.test(args.ttl) || Number(args.ttl) < 1) fail('--ttl must be a positive number of seconds');
const users = args.users.split(',').map((u) => u.trim()).filter(Boolean);
if (users.length === 0) fail('--users needs at least one name');
for (const u of users) if (!/^[A-Za-z0-9._-]+$/.test(u)) fail(`user name ${JSON.stringify(u)}: only [A-Za-z0-9._-]`);
const ttl = Number(args.ttl);
const outDir = resolvePath(args.out);
mkdirSync(outDir, { recursive: true });

// ---- load oidc-provider: normal resolution (next to this file), else NODE_PATH
async function loadProvider() {
  try {
    return (await import('oidc-provider')).default;
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  }
  for (const dir of (process.env.NODE_PATH || '').split(':').filter(Boolean)) {
    const pkgDir = join(resolvePath(dir), 'oidc-provider');
    const pkgFile = join(pkgDir, 'package.json');
    if (!existsSync(pkgFile)) continue;
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
    let entry = pkg.exports;
    while (entry && typeof entry === 'object') entry = entry['.'] ?? entry.import ?? entry.default;
    return (await import(pathToFileURL(join(pkgDir, entry || pkg.main || 'index.js')).href)).default;
  }
  return fail('cannot find the oidc-provider package: install it (see the top of provider.mjs) and set NODE_PATH to that node_modules');
}
const Provider = await loadProvider();

// ---- listen first, so that --port 0 works and the issuer is known
const server = createServer();
await new Promise((ok) => {
  server.once('error', (err) => fail(`listening on 127.0.0.1:${args.port}: ${err.message}`));
  server.listen(Number(args.port), '127.0.0.1', ok);
});
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;
const redirectUri = `${issuer}/cb`; // never fetched: the code is read off the redirect

// ---- provider configuration
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: randomBytes(8).toString('hex'),
  alg: 'RS256',
  use: 'sig',
};
const b64url = (buf) => buf.toString('base64url');
const clients = ['s3hpc', 'other'].map((clientId) => ({
  client_id: clientId,
  client_secret: b64url(randomBytes(32)),
  redirect_uris: [redirectUri],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
  id_token_signed_response_alg: 'RS256',
}));
const known = new Set(users);

const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [signingKey] },
  cookies: { keys: [b64url(randomBytes(32))] },
  // Claims of the `profile` scope; with conformIdTokenClaims off they go into
  // the ID token itself and not only to userinfo.
  claims: { openid: ['sub'], profile: ['preferred_username'] },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  ttl: {
    IdToken: ttl,
    AccessToken: ttl, // issued alongside, unused
    AuthorizationCode: 60,
    Interaction: 60,
    Grant: 3600,
    Session: 3600,
  },
  async findAccount(_ctx, id) {
    if (!known.has(id)) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, preferred_username: id };
      },
    };
  },
});
provider.on('server_error', (_ctx, err) => console.error('oidc provider: server_error', err));
server.on('request', provider.callback());

const shutdown = () => {
  server.close();
  server.closeAllConnections?.();
  process.exit(0);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

// ---- a small browser: cookie jar (name/path aware) and form submission
class Jar {
  constructor() { this.cookies = new Map(); } // "name path" -> {name, value, path}

  store(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let path = '/';
      let expired = false;
      for (const a of attrs) {
        const [k, v = ''] = a.split('=');
        const key = k.trim().toLowerCase();
        if (key === 'path') path = v.trim() || '/';
        if (key === 'expires' && Date.parse(v) <= Date.now()) expired = true;
        if (key === 'max-age' && Number(v) <= 0) expired = true;
      }
      const id = `${name} ${path}`;
      if (expired || value === '') this.cookies.delete(id);
      else this.cookies.set(id, { name, value, path });
    }
  }

  header(url) {
    const { pathname } = new URL(url);
    return [...this.cookies.values()]
      .filter((c) => pathname === c.path || pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }
}

async function request(jar, url, init = {}) {
  const headers = { ...(init.headers || {}) };
  const cookie = jar.header(url);
  if (cookie) headers.cookie = cookie;
  const res = await fetch(url, { ...init, headers, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  jar.store(res);
  return res;
}

const unescapeHtml = (s) => s
  .replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#x27;/g, "'")
  .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function parseForm(html, base) {
  const form = /<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const fields = {};
  for (const input of form[2].matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(input[0]);
    const value = /\bvalue="([^"]*)"/i.exec(input[0]);
    if (name) fields[unescapeHtml(name[1])] = value ? unescapeHtml(value[1]) : '';
  }
  return { action: new URL(unescapeHtml(form[1]), base).href, fields };
}

// One ID token for (client, user) through the authorization code flow.
async function idToken(client, user) {
  const jar = new Jar();
  const state = b64url(randomBytes(16));
  const nonce = b64url(randomBytes(16));
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  const auth = new URL('/auth', issuer);
  auth.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid profile',
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();

  let res = await request(jar, auth.href);
  let code = null;
  for (let step = 0; step < 20 && code === null; step += 1) {
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location'), res.url || issuer);
      await res.arrayBuffer();
      if (next.href.startsWith(`${redirectUri}?`)) {
        const p = next.searchParams;
        if (p.get('error')) throw new Error(`authorization error: ${p.get('error')}: ${p.get('error_description')}`);
        if (p.get('state') !== state) throw new Error('state mismatch');
        code = p.get('code');
        break;
      }
      res = await request(jar, next.href);
    } else if (res.status === 200) {
      const page = await res.text();
      const form = parseForm(page, res.url);
      if (!form) throw new Error(`no form on interaction page: ${page.slice(0, 300)}`);
      if (form.fields.prompt === 'login') {
        form.fields.login = user;
        form.fields.password = 'any';
      } else if (form.fields.prompt !== 'consent') {
        throw new Error(`unexpected interaction form: ${JSON.stringify(form.fields)}`);
      }
      res = await request(jar, form.action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form.fields).toString(),
      });
    } else {
      throw new Error(`HTTP ${res.status} from ${res.url}: ${(await res.text()).slice(0, 300)}`);
    }
  }
  if (!code) throw new Error('no authorization code after 20 steps');

  const tokenRes = await fetch(new URL('/token', issuer), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier,
    }).toString(),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await tokenRes.json();
  if (!tokenRes.ok || !body.id_token) throw new Error(`token endpoint: HTTP ${tokenRes.status} ${JSON.stringify(body)}`);

  // Sanity only (the tests do the real verification against /jwks).
  const claims = JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString());
  if (claims.iss !== issuer || claims.aud !== client.client_id || claims.sub !== user
      || claims.preferred_username !== user || claims.nonce !== nonce) {
    throw new Error(`unexpected ID token claims: ${JSON.stringify(claims)}`);
  }
  return body.id_token;
}

try {
  for (const client of clients) {
    for (const user of users) {
      writeFileSync(join(outDir, `${client.client_id}-${user}.jwt`), await idToken(client, user));
    }
  }
  writeFileSync(join(outDir, 'issuer'), issuer);
} catch (err) {
  fail(`getting the tokens: ${err?.stack || err}`);
}
clearTimeout(deadline);
process.stdout.write('ready\n');
