#!/usr/bin/env node
// A Wizard Arena bot in Node.js: plays classic Wizard and Wizard Extreme.
//
//   node bot.js --arena 127.0.0.1:50051 --token T [--name node-heuristic] [--seed S]
//               [--max-matches N] [--proto PATH] [--retry-for SECONDS]
//               [--tls-ca FILE | --tls] [--tls-cert FILE --tls-key FILE]
//
// --arena may also be a Unix domain socket, unix:/PATH (or unix:///PATH): how the arena
// reaches a bot it runs in a sandbox without a network.
//
// For an arena that serves TLS: --tls-ca FILE trusts the CA the organiser hands out (and
// checks the arena's certificate against it and against the host in --arena), --tls the
// usual public CAs (Node's, or the file GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names); --tls-cert
// and --tls-key add a client certificate. The same come from
// ARENA_TLS_CA, ARENA_TLS=1, ARENA_TLS_CERT and ARENA_TLS_KEY (ARENA_TLS=0 turns those
// variables off). A unix: address stays plaintext: the socket is local.
//
// It speaks the protocol in proto/wizard_arena/v1/arena.proto with nothing but
// @grpc/grpc-js and @grpc/proto-loader: one bidirectional Play stream, Hello first,
// then an Action for every DecisionRequest, echoing its request_id. Every answer is
// taken from the request's options (a prediction only takes tokens the supply has),
// so the bot never plays an illegal move. When the connection drops it reconnects
// with backoff (the arena keeps its seats for a grace period); SIGTERM/SIGINT and a
// stream the arena ends with status OK make it exit with status 0. A refusal, a failed
// TLS handshake (a certificate that does not verify, TLS against a plaintext arena) or a
// bad command line is one line on stderr and exit status 2.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// ------------------------------------------------------------------ command line

function parseArgs(argv) {
  const args = {
    arena: process.env.ARENA_ADDRESS || '127.0.0.1:50051',
    token: process.env.ARENA_TOKEN || '',
    // Sent in Hello only when given: the token already says which bot this is, and the
    // arena's Welcome tells us the registered name.
    name: process.env.ARENA_BOT_NAME || '',
    seed: null,
    maxMatches: Math.max(1, parseInt(process.env.ARENA_MAX_MATCHES, 10) || 1),
    proto: defaultProto(),
    giveUpAfter: 60,
    tls: false,
    tlsCa: null,
    tlsCert: null,
    tlsKey: null,
  };
  const flags = {
    '--arena': (v) => { args.arena = v; },
    '--token': (v) => { args.token = v; },
    '--name': (v) => { args.name = v; },
    '--seed': (v) => { args.seed = v; },
    '--max-matches': (v) => { args.maxMatches = Math.max(1, parseInt(v, 10) || 1); },
    '--proto': (v) => { args.proto = path.resolve(v); },
    '--retry-for': (v) => { args.giveUpAfter = Number(v); },
    '--give-up-after': (v) => { args.giveUpAfter = Number(v); },   // the older name
    '--tls-ca': (v) => { args.tlsCa = v; },
    '--tls-cert': (v) => { args.tlsCert = v; },
    '--tls-key': (v) => { args.tlsKey = v; },
  };
  for (let i = 0; i < argv.length; i++) {
    let [flag, value] = argv[i].split(/=(.*)/s);
    if (flag === '--help' || flag === '-h') {
      console.log('usage: node bot.js --arena HOST:PORT|unix:/PATH --token T [--name N] [--seed S] ' +
                  '[--max-matches N] [--proto PATH] [--retry-for SECONDS] [--tls-ca FILE | --tls] ' +
                  '[--tls-cert FILE --tls-key FILE]');
      process.exit(0);
    }
    if (flag === '--tls' && value === undefined) { args.tls = true; continue; }   // a switch: no value
    if (!(flag in flags)) fail(`unknown argument ${flag}`);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) fail(`${flag} needs a value`);
    }
    flags[flag](value);
  }
  if (!args.token) fail('a token is needed: --token T or ARENA_TOKEN');
  if (!(args.giveUpAfter >= 0)) fail(`--retry-for takes seconds (got ${args.giveUpAfter})`);
  args.arena = withPort(args.arena);
  args.tls = tlsSettings(args);
  return args;
}

// HOST alone means the arena's default port, as `arena serve` uses it (grpc would
// otherwise try 443); an IPv6 address goes in brackets. A Unix socket, unix:/PATH or
// unix:///PATH, goes to grpc-js as it is; its path must be absolute (the bot's working
// directory is not the arena's), and at most 107 bytes long, as the kernel allows.
const DEFAULT_PORT = 50051;
const MAX_SOCKET_PATH_BYTES = 107;

function withPort(address) {
  if (address.startsWith('unix:')) return checkedSocket(address);
  let host = address;
  let port = String(DEFAULT_PORT);
  const bracketed = address.match(/^\[([^\]]+)\](?::(.*))?$/);
  if (bracketed) {
    host = `[${bracketed[1]}]`;
    if (bracketed[2] !== undefined) port = bracketed[2];
  } else if (address.startsWith('[')) {
    host = '';                      // an unclosed bracket: refused below
  } else if ((address.match(/:/g) || []).length > 1) {
    host = `[${address}]`;          // a bare IPv6 address
  } else if (address.includes(':')) {
    [host, port] = address.split(':');
  }
  const number = Number(port);
  if (!host || !/^\d+$/.test(port) || number < 1 || number > 65535) {
    fail(`--arena takes HOST or HOST:PORT with a port from 1 to 65535 (got '${address}')`);
  }
  return `${host}:${number}`;
}

// unix:/PATH or unix:///PATH, unchanged; anything else after unix: is refused in one line
// (grpc-js would read unix://NAME/PATH as the relative PATH).
function checkedSocket(address) {
  let socketPath = address.slice('unix:'.length);
  if (socketPath.startsWith('//')) {
    socketPath = socketPath.slice(2);
    if (!socketPath.startsWith('/')) fail(`--arena unix:///PATH takes three slashes before an absolute path (got '${address}')`);
  }
  if (!socketPath.startsWith('/') || socketPath.endsWith('/')) {
    fail(`--arena unix:/PATH takes the absolute path of a socket (got '${address}')`);
  }
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    fail(`--arena: a Unix socket path has at most ${MAX_SOCKET_PATH_BYTES} bytes (got ${Buffer.byteLength(socketPath)})`);
  }
  return address;
}

// The contract: proto/ in a checkout of the repository, else the copy installed with
// the arena's Python package (`arena proto` prints its path).
function defaultProto() {
  const rest = ['wizard_arena', 'v1', 'arena.proto'];
  const checkout = path.resolve(__dirname, '..', '..', 'proto', ...rest);
  const installed = path.resolve(__dirname, '..', '..', 'arena', 'wire', 'pb', ...rest);
  return require('fs').existsSync(checkout) ? checkout : installed;
}

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(2);
}

function log(message) {
  console.error(`${new Date().toISOString()} ${message}`);
}

// ------------------------------------------------------------------ TLS

// The TLS settings the options and the ARENA_TLS* variables ask for, read and checked now
// (grpc-js would only fail at the first connection): null for plaintext, else the PEM
// contents for grpc.credentials.createSsl and where the CA came from, for messages.
function tlsSettings(args) {
  const switchValue = (process.env.ARENA_TLS || '').trim().toLowerCase();
  const on = ['1', 'true', 'yes', 'on'].includes(switchValue);
  const off = ['0', 'false', 'no', 'off'].includes(switchValue);
  if (switchValue && !on && !off) fail(`ARENA_TLS='${process.env.ARENA_TLS}': give 1 (TLS) or 0 (plaintext)`);
  const files = {};   // what -> [path, the option or variable that gave it]
  for (const [what, given, flag, variable] of [['ca', args.tlsCa, '--tls-ca', 'ARENA_TLS_CA'],
                                               ['cert', args.tlsCert, '--tls-cert', 'ARENA_TLS_CERT'],
                                               ['key', args.tlsKey, '--tls-key', 'ARENA_TLS_KEY']]) {
    if (given) files[what] = [given, flag];
    else if (process.env[variable] && !off) files[what] = [process.env[variable], variable];
  }
  if (!args.tls && !on && Object.keys(files).length === 0) return null;
  if (Boolean(files.cert) !== Boolean(files.key)) {
    fail('a client certificate needs both --tls-cert and --tls-key (or ARENA_TLS_CERT and ARENA_TLS_KEY)');
  }
  const pem = {};
  for (const [what, [file, source]] of Object.entries(files)) {
    let data;
    try {
      data = fs.readFileSync(file);
    } catch (err) {
      fail(`${source}: cannot read '${file}': ${err.code === 'ENOENT' ? 'no such file' : err.code || err.message}`);
    }
    const begin = what === 'key' ? /-----BEGIN (RSA |EC )?PRIVATE KEY-----/ : /-----BEGIN CERTIFICATE-----/;
    if (!begin.test(data.toString('latin1'))) {
      fail(`${source}: '${file}' is not ${what === 'key' ? 'an unencrypted PEM private key' : 'a PEM certificate'}`);
    }
    pem[what] = data;
  }
  if (pem.cert) {
    try {   // the key must be the certificate's own: Node's TLS checks the pair here
      require('tls').createSecureContext({ cert: pem.cert, key: pem.key });
    } catch (err) {
      fail(`${files.key[1]}: '${files.key[0]}' is not the private key of the certificate in '${files.cert[0]}' ` +
           `(${err.message})`);
    }
  }
  return { ca: pem.ca || null, cert: pem.cert || null, key: pem.key || null, caFile: files.ca ? files.ca[0] : null };
}

// How grpc-js reports a failed TLS handshake: UNAVAILABLE, with Node's own error text in
// the details (measured with @grpc/grpc-js 1.14.7 on Node 20). These come from the
// settings on one side or the other, not from an arena that is down: returned is the
// one line to say (the bot then exits with status 2), or null for any other failure.
const CERTIFICATE_ERRORS = new RegExp(`(${[
  'unable to verify the first certificate', 'unable to get (?:local )?issuer certificate',
  'self[- ]signed certificate(?: in certificate chain)?', 'certificate signature failure', 'invalid CA certificate',
  'certificate has expired', 'certificate is not yet valid',
].join('|')})`);

function tlsFailure(details, tls, arena) {
  if (!tls) return null;
  if (/ERR_TLS_CERT_ALTNAME_INVALID|does not match certificate's altnames/.test(details)) {
    const host = arena.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    return `the arena's certificate is not for ${host} (ERR_TLS_CERT_ALTNAME_INVALID); ` +
           'connect by a name or address the certificate is for (ask the organiser)';
  }
  const verify = details.match(CERTIFICATE_ERRORS);
  if (verify) {
    if (/expired|not yet valid/.test(verify[1])) {
      return `the arena's certificate is out of date (${verify[1]}); tell the organiser, or check this machine's clock`;
    }
    if (tls.ca) {
      return `the arena's certificate is not signed by the CA in ${tls.caFile} (${verify[1]}); ` +
             "check --tls-ca (or ARENA_TLS_CA): it must be the CA that signed the arena's certificate";
    }
    return `the arena's certificate is not signed by a CA this system trusts (${verify[1]}); ` +
           'give the CA the organiser hands out with --tls-ca FILE (or ARENA_TLS_CA)';
  }
  if (/wrong version number/.test(details)) {
    return `the arena at ${arena} does not use TLS (wrong version number); leave out --tls, --tls-ca and ` +
           "ARENA_TLS*, or ask the organiser for the arena's TLS address";
  }
  return null;
}

// grpc-js says only "Failed to connect" when the arena closed the connection before
// answering; a TLS arena does that to a plaintext bot, and (TLS 1.3) to a bot whose client
// certificate is missing or refused. It is retried, since a stopping arena looks the same,
// but said with what to check.
function closedHint(details, tls, arena) {
  if (arena.startsWith('unix:') || !/Last error: Failed to connect \(/.test(details || '')) return '';
  if (!tls) return '; if the arena uses TLS, give --tls-ca FILE (or --tls)';
  if (!tls.cert) return '; if the arena asks for a client certificate, give --tls-cert FILE and --tls-key FILE';
  return '; the arena may not accept this client certificate (--tls-cert)';
}

// A TLS arena closes a plaintext bot's connection before answering, as a stopping arena
// does; a TLS handshake with the address tells the two apart (the certificate is not
// checked here: only whether the address speaks TLS). done(true) for a TLS arena.
function speaksTls(arena, done) {
  const address = arena.match(/^\[?([^\]]+?)\]?:(\d+)$/);
  if (!address) { done(false); return; }
  let said = false;
  const socket = require('tls').connect({ host: address[1], port: Number(address[2]), rejectUnauthorized: false });
  const finish = (yes) => { if (said) return; said = true; socket.destroy(); done(yes); };
  socket.setTimeout(2000, () => finish(false));
  socket.once('secureConnect', () => finish(true));
  socket.once('error', () => finish(false));
}

// grpc-js gives TLS the target's host as the server name, and Node warns once (DEP0123)
// when that is an IP address, as with --arena 127.0.0.1:50051. The certificate is still
// checked against the address; only that warning is kept out of the bot's log.
function quietIpServerNameWarning() {
  const emitWarning = process.emitWarning;
  process.emitWarning = function filteredWarning(warning, ...rest) {
    const code = rest[0] && typeof rest[0] === 'object' ? rest[0].code : rest[1];
    if (code !== 'DEP0123') emitWarning.call(process, warning, ...rest);
  };
}

// ------------------------------------------------------------------ seeded randomness

// A string hash (FNV-1a) to turn the arena's 64-bit seed (a decimal string) and --seed
// into a 32-bit state, and mulberry32 as the generator: small, fast, reproducible.
function hashString(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function makeRng(seedText) {
  let state = hashString(seedText);
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ------------------------------------------------------------------ cards

const COLOUR_OF_LETTER = { b: 'blue', g: 'green', r: 'red', y: 'yellow', p: 'purple' };
const EXTREME_COLOURS = ['red', 'yellow', 'green', 'blue', 'purple'];
const EXTREME_MAX_RANK = { 3: 9, 4: 12, 5: 15 };

function parseCard(code) {
  if (code[0] === 'W') return { code, wizard: true, jester: false, suit: null, rank: 0 };
  if (code[0] === 'J') return { code, wizard: false, jester: true, suit: null, rank: 0 };
  return { code, wizard: false, jester: false, suit: COLOUR_OF_LETTER[code[0]], rank: parseInt(code.slice(1), 10) };
}

// Index of the card winning (so far) a trick given as card codes in play order.
function classicWinner(codes, trump) {
  let lead = null;
  for (const code of codes) {
    const c = parseCard(code);
    if (c.wizard) break;              // a Wizard first: no lead suit
    if (!c.jester) { lead = c.suit; break; }
  }
  let best = 0;
  let bestKey = -1;
  for (let i = 0; i < codes.length; i++) {
    const c = parseCard(codes[i]);
    if (c.wizard) return i;           // the first Wizard wins
    const key = c.jester ? 0 : c.suit === trump ? 200 + c.rank : c.suit === lead ? 100 + c.rank : 0;
    if (key > bestKey) { best = i; bestKey = key; }
  }
  return best;
}

function extremeWinner(codes) {
  const lead = parseCard(codes[0]).suit;
  let best = 0;
  let bestKey = -1;
  for (let i = 0; i < codes.length; i++) {
    const c = parseCard(codes[i]);
    const key = c.suit === 'red' ? 100 + c.rank : c.suit === lead ? c.rank : -1;
    if (key > bestKey) { best = i; bestKey = key; }
  }
  return best;
}

function winsNow(obs, code) {
  const codes = obs.trick.map((t) => t.card).concat([code]);
  const w = obs.variant === 'classic' ? classicWinner(codes, obs.trump) : extremeWinner(codes);
  return w === codes.length - 1;
}

// How strong a card is, to order cards: Wizards, then trumps, then by rank; Jesters last.
function strength(code, trump) {
  const c = parseCard(code);
  if (c.wizard) return 100;
  if (c.jester) return 0;
  return (c.suit === trump ? 50 : 0) + c.rank;
}

// ------------------------------------------------------------------ strategy

// A simple heuristic: count likely winners to bid or predict; then win cheaply while
// tricks are wanted and throw the strongest losing card when they are not.
const strategy = {
  bid(obs, options) {
    const hand = obs.hand.map(parseCard);
    let expected = 0;
    for (const c of hand) {
      if (c.wizard) expected += 0.9;
      else if (c.jester) expected += 0;
      else if (obs.trump && c.suit === obs.trump) expected += c.rank >= 11 ? 0.8 : c.rank >= 8 ? 0.45 : 0.2;
      else if (c.rank === 13) expected += obs.players <= 4 ? 0.6 : 0.4;
      else if (c.rank === 12) expected += obs.players <= 4 ? 0.25 : 0.1;
    }
    const target = Math.round(expected);
    return nearest(options, target);
  },

  trump(obs, options) {
    const score = Object.fromEntries(options.map((s) => [s, 0]));
    for (const c of obs.hand.map(parseCard)) if (c.suit in score) score[c.suit] += 10 + c.rank;
    return options.reduce((a, b) => (score[b] > score[a] ? b : a));
  },

  play(obs, options, seatState) {
    const seat = obs.seat;
    const trump = obs.variant === 'classic' ? obs.trump : 'red';
    let wantWin;
    if (obs.variant === 'classic') {
      const bid = obs.bids[seat];
      wantWin = bid === null || bid === undefined || bid > obs.tricks_won[seat];
    } else if (obs.destroyer === seat) {
      wantWin = false;
    } else {
      const held = obs.tokens[seat];
      const lead = obs.lead_suit;
      // Win only what we can pay for: a token of the lead colour (or, leading, of the
      // card's own colour), a red token for a red card, or a white joker token.
      wantWin = (code) => {
        const c = parseCard(code);
        const colour = lead || c.suit;
        return (held.white || 0) > 0 || (held[colour] || 0) > 0 || (c.suit === 'red' && (held.red || 0) > 0);
      };
    }
    const byStrength = [...options].sort((a, b) => strength(a, trump) - strength(b, trump));
    const winners = byStrength.filter((code) => winsNow(obs, code));
    const losers = byStrength.filter((code) => !winsNow(obs, code));
    const leading = obs.trick.length === 0;
    const wants = (code) => (typeof wantWin === 'function' ? wantWin(code) : wantWin);
    if (leading) {
      // Lead our strongest card if we want the trick, else one of our weakest (the
      // seat's seeded generator breaks ties, so a match replays exactly).
      const top = byStrength[byStrength.length - 1];
      if (wants(top)) return top;
      const weakest = byStrength.filter((code) => strength(code, trump) === strength(byStrength[0], trump));
      return weakest[Math.floor(seatState.rng() * weakest.length)];
    }
    const wantedWinners = winners.filter(wants);
    if (wantedWinners.length) {
      // Last to play: the cheapest winner is enough; otherwise the strongest one.
      const last = obs.trick.length === obs.players - 1;
      return last ? wantedWinners[0] : wantedWinners[wantedWinners.length - 1];
    }
    if (losers.length) return losers[losers.length - 1];   // duck with the strongest loser
    return byStrength[0];
  },

  predict(obs) {
    const hand = obs.hand.map(parseCard);
    const top = EXTREME_MAX_RANK[obs.players] || 15;
    const tokens = {};
    for (const colour of EXTREME_COLOURS) {
      const ranks = new Set(hand.filter((c) => c.suit === colour).map((c) => c.rank));
      // Count our cards that no higher card of the colour held by others can beat
      // (for red, also the next one down): those are near-certain winners.
      let wins = 0;
      let higherElsewhere = 0;
      for (let r = top; r >= 1; r--) {
        if (ranks.has(r)) {
          if (higherElsewhere === 0 || (colour === 'red' && higherElsewhere === 1)) wins += 1;
        } else {
          higherElsewhere += 1;
        }
      }
      const n = Math.min(wins, obs.supply[colour] || 0);
      if (n > 0) tokens[colour] = n;
    }
    // The destroyer is a good deal with the default penalty: take it when free and
    // the hand has few sure winners to predict.
    const sure = Object.values(tokens).reduce((a, b) => a + b, 0);
    if (obs.destroyer_free && sure <= 2) return { destroyer: true, tokens: {}, take_from: [] };
    return { destroyer: false, tokens, take_from: [] };
  },

  pay(obs, options) {
    return options.includes('white') ? 'white' : options[0];
  },
};

function nearest(options, target) {
  return options.reduce((a, b) => (Math.abs(b - target) < Math.abs(a - target) ? b : a));
}

// ------------------------------------------------------------------ answering requests

const KINDS = { BID: 'bid', PLAY: 'play', TRUMP: 'trump', PREDICT: 'predict', PAY: 'pay' };

// One answer per request. A bug in the strategy must not end the bot: log it and send
// the first option (or an empty prediction).
function answer(request, seatState) {
  const kind = KINDS[request.kind];
  const options = request.options;
  const action = { request_id: request.request_id };
  try {
    const obs = JSON.parse(request.observation_json);
    if (kind === 'predict') {
      action.prediction = strategy.predict(obs, seatState);
      return action;
    }
    let choice;
    if (kind === 'bid') choice = String(strategy.bid(obs, options.map(Number), seatState));
    else if (kind === 'play' || kind === 'trump' || kind === 'pay') choice = strategy[kind](obs, options, seatState);
    else throw new Error(`unknown decision kind ${request.kind}`);
    if (!options.includes(choice)) throw new Error(`${kind} answer ${choice} is not among the options`);
    action.option = choice;
  } catch (err) {
    log(`${kind || request.kind} decision failed, sending the fallback: ${err.stack || err}`);
    if (kind === 'predict' || options.length === 0) action.prediction = { destroyer: false, tokens: {}, take_from: [] };
    else action.option = options[0];
  }
  return action;
}

// ------------------------------------------------------------------ the connection

const FATAL = new Set([
  grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.INVALID_ARGUMENT,
  grpc.status.FAILED_PRECONDITION, grpc.status.UNIMPLEMENTED,
]);

// Keepalive: the arena refuses pings more often than every few seconds without data,
// so ping every 20 s; the arena may send large messages (records), so allow 32 MiB.
const CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 20000,
  'grpc.keepalive_timeout_ms': 10000,
  'grpc.keepalive_permit_without_calls': 0,
  'grpc.max_receive_message_length': 32 * 1024 * 1024,
  'grpc.max_send_message_length': 32 * 1024 * 1024,
};

const PARENT_AT_START = process.ppid;

function main() {
  const args = parseArgs(process.argv.slice(2));
  const definition = protoLoader.loadSync(args.proto, {
    keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
  });
  const ArenaClient = grpc.loadPackageDefinition(definition).wizard_arena.v1.Arena;
  // TLS over TCP only: a Unix socket is local, and the arena serves it in plaintext.
  const tls = args.arena.startsWith('unix:') ? null : args.tls;
  const credentials = tls ? grpc.credentials.createSsl(tls.ca, tls.key, tls.cert) : grpc.credentials.createInsecure();
  if (tls) quietIpServerNameWarning();

  const seats = new Map();        // "matchId/seat" -> { rng, info }
  let client = null;
  let call = null;
  let stopping = false;
  let delay = 100;                // ms, doubles up to 5 s
  let disconnectedSince = Date.now();
  let retryTimer = null;
  let retrying = false;           // said once per outage, not once per attempt

  function seatFor(matchId, seat, seed) {
    const key = `${matchId}/${seat}`;
    if (!seats.has(key)) {
      const seedText = `${args.seed === null ? '' : args.seed + '/'}${seed === undefined ? matchId : seed}`;
      seats.set(key, { rng: makeRng(seedText) });
    }
    return seats.get(key);
  }

  function onMessage(message) {
    switch (message.msg) {
      case 'welcome':
        delay = 100;
        if (message.welcome.bot_name) args.name = message.welcome.bot_name;
        log(`${args.name || 'bot'}: connected to ${args.arena}${tls ? ' over TLS' : ''} as ${message.welcome.bot_id}` +
            (retrying ? ` after ${((Date.now() - disconnectedSince) / 1000).toFixed(1)} s` : ''));
        retrying = false;
        break;
      case 'match_started': {
        const m = message.match_started;
        seatFor(m.match_id, m.seat, m.seed);
        break;
      }
      case 'request': {
        const r = message.request;
        const action = answer(r, seatFor(r.match_id, r.seat));
        call.write({ action });
        break;
      }
      case 'fault': {
        const f = message.fault;
        log(`${args.name || 'bot'}: fault in match ${f.match_id}: ${f.kind}: ${f.message}${f.forfeited ? ' (forfeited)' : ''}`);
        break;
      }
      case 'match_ended': {
        const e = message.match_ended;
        seats.delete(`${e.match_id}/${e.seat}`);
        log(`${args.name || 'bot'}: match ${e.match_id} ended (${e.reason}): place ${e.places[e.seat]}, totals ${e.totals.join(' ')}`);
        break;
      }
      default:
        break;
    }
  }

  function connect() {
    retryTimer = null;
    if (stopping) return;
    client = new ArenaClient(args.arena, credentials, CHANNEL_OPTIONS);
    const metadata = new grpc.Metadata();
    metadata.add('authorization', `Bearer ${args.token}`);
    let welcomed = false;
    let ended = false;
    call = client.Play(metadata);
    call.on('data', (message) => {
      if (message.msg === 'welcome') welcomed = true;
      onMessage(message);
    });
    // 'error' comes with every non-OK status; the 'status' event handles both.
    call.on('error', () => {});
    call.on('status', (status) => {
      if (ended) return;
      ended = true;
      client.close();
      if (stopping) return;
      if (status.code === grpc.status.OK) {
        log(`${args.name || 'bot'}: the arena closed the connection; exiting`);
        process.exit(0);
      }
      if (FATAL.has(status.code)) {
        log(`${args.name || 'bot'}: refused by the arena: ${status.details}`);
        process.exit(2);
      }
      // grpc-js ends its details with an empty "Resolution note: ", left out of the log.
      const said = (status.details || String(status.code)).replace(/\.? Resolution note: $/, '');
      const handshake = status.code === grpc.status.UNAVAILABLE ? tlsFailure(status.details, tls, args.arena) : null;
      if (handshake) {
        log(`${args.name || 'bot'}: TLS handshake with ${args.arena} failed: ${handshake}`);
        process.exit(2);
      }
      // Started by an arena (ARENA_PARENT_PID) that has since exited: nothing to reconnect to.
      // Only a launcher that was the parent at the start counts: in a sandbox (its own PID
      // namespace) the arena sets no ARENA_PARENT_PID, and one leaking in from outside
      // names a process the sandbox cannot see.
      const launcher = process.env.ARENA_PARENT_PID;
      if (launcher && String(PARENT_AT_START) === launcher && String(process.ppid) !== launcher) {
        log(`${args.name || 'bot'}: the arena that started this bot has exited; exiting`);
        process.exit(0);
      }
      if (!tls && !welcomed && !retrying && closedHint(status.details, tls, args.arena)) {
        speaksTls(args.arena, (yes) => {
          if (stopping) return;
          if (!yes) { retryLater(said, status.details, welcomed); return; }
          log(`${args.name || 'bot'}: the arena at ${args.arena} uses TLS, and this bot connected without it: ` +
              "give --tls-ca FILE (the CA the organiser hands out; or ARENA_TLS_CA) or --tls (the system's CAs)");
          process.exit(2);
        });
        return;
      }
      retryLater(said, status.details, welcomed);
    });
    call.write({ hello: { name: args.name, version: '1.0.0-node', variants: ['classic', 'extreme'],
                          max_matches: args.maxMatches } });
  }

  // After a lost connection (welcomed: it had been welcomed) or one never made: try again
  // with backoff, or give up after --retry-for.
  function retryLater(said, details, welcomed) {
    if (welcomed) disconnectedSince = Date.now();
    else if (Date.now() - disconnectedSince > args.giveUpAfter * 1000) {
      log(`${args.name || 'bot'}: no connection to ${args.arena} for ${args.giveUpAfter} s; giving up ` +
          `(${said}${closedHint(details, tls, args.arena)})`);
      process.exit(1);
    }
    const wait = Math.min(delay * (0.5 + Math.random()), 5000);
    if (!retrying) {
      retrying = true;
      log(`${args.name || 'bot'}: ${welcomed ? 'lost the connection to' : 'cannot reach'} ${args.arena} ` +
          `(${said}${welcomed ? '' : closedHint(details, tls, args.arena)}); ` +
          `retrying with backoff up to 5 s for ${args.giveUpAfter} s`);
    }
    retryTimer = setTimeout(connect, wait);
    delay = Math.min(delay * 2, 5000);
  }

  function stop(signal) {
    if (stopping) return;
    stopping = true;
    log(`${args.name || 'bot'}: ${signal}, stopping`);
    if (retryTimer) clearTimeout(retryTimer);
    if (call) call.cancel();
    if (client) client.close();
    // Give the cancellation a moment to reach the arena, then leave.
    setTimeout(() => process.exit(0), 100).unref();
  }

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  connect();
}

if (require.main === module) main();

module.exports = { strategy, answer, classicWinner, extremeWinner, makeRng, tlsFailure };
