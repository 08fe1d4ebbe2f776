import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookHttpClient, type AttemptResult, type WebhookHttpClientOptions } from '../../../src/doors/webhooks/http-client.ts';
import type { LookupAll } from '../../../src/doors/webhooks/address-guard.ts';
import { closedPort, type Respond, startReceiver, type Receiver } from '../../support/receiver.ts';
import { connectionsTo, total } from '../../support/sockets.ts';
import { eventually } from '../../support/wait.ts';

const receivers: Receiver[] = [];
const clients: WebhookHttpClient[] = [];

async function receiver(respond: Respond): Promise<Receiver> {
  const started = await startReceiver(respond);
  receivers.push(started);
  return started;
}

function client(options: Partial<WebhookHttpClientOptions> = {}): WebhookHttpClient {
  const created = new WebhookHttpClient({ allowPrivate: true, timeoutMs: 5_000, ...options });
  clients.push(created);
  return created;
}

const answerOk = () => 200;

afterEach(async () => {
  // Receivers first: closing their connections releases attempts still waiting on a hanging receiver.
  await Promise.all(receivers.splice(0).map((started) => started.close()));
  await Promise.all(clients.splice(0).map((created) => created.close()));
});

describe('WebhookHttpClient: requests', () => {
  it('POSTs the body as JSON with our user agent and the given headers', async () => {
    const target = await receiver(answerOk);
    const body = JSON.stringify({ messageId: 'm1', text: 'héllo €' });
    const result = await client({ userAgent: 'Tern-Test/9' }).send({
      method: 'POST',
      url: `${target.origin}/hooks/status?token=s3cr%20t`,
      body,
      headers: { 'Webhook-Id': 'evt_1', 'x-extra': 'yes' },
    });
    assert.equal(result.outcome, 'delivered');
    assert.equal(result.httpStatus, 200);
    assert.equal(result.error, null);
    assert.equal(result.responseSnippet, 'ok');
    assert.ok(Number.isInteger(result.latencyMs) && result.latencyMs >= 0);
    const [request] = target.requests;
    assert.equal(target.requests.length, 1);
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/hooks/status?token=s3cr%20t');
    assert.equal(request!.body, body);
    assert.equal(request!.headers['content-type'], 'application/json');
    assert.equal(request!.headers['user-agent'], 'Tern-Test/9');
    assert.equal(request!.headers['webhook-id'], 'evt_1');
    assert.equal(request!.headers['x-extra'], 'yes');
    assert.equal(request!.headers.host, `127.0.0.1:${target.port}`);
  });

  it('lets the caller override the content type', async () => {
    const target = await receiver(answerOk);
    await client().send({ method: 'POST', url: target.origin, body: 'a=1', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(target.requests[0]!.headers['content-type'], 'text/plain');
  });

  it('sends legacy GET callbacks with query parameters appended to the URL, and no body', async () => {
    const target = await receiver(answerOk);
    const result = await client().send({
      method: 'GET',
      url: `${target.origin}/dlr.php?key=a%2Fb`,
      query: {
        numero: '33612345678',
        date_reception: '2026-01-02 03:04:05',
        statut: 11,
        smsID: 'abc&def=1',
        refClient: null,
        cost: undefined,
      },
    });
    assert.equal(result.outcome, 'delivered');
    const [request] = target.requests;
    assert.equal(request!.method, 'GET');
    assert.equal(request!.body, '');
    assert.equal(request!.headers['content-type'], undefined);
    assert.ok(request!.url.startsWith('/dlr.php?key=a%2Fb&'), request!.url);
    const query = new URL(request!.url, 'http://x').searchParams;
    assert.deepEqual(
      [...query],
      [
        ['key', 'a/b'],
        ['numero', '33612345678'],
        ['date_reception', '2026-01-02 03:04:05'],
        ['statut', '11'],
        ['smsID', 'abc&def=1'],
      ],
    );
  });

  it('sends query parameters on a URL that has none', async () => {
    const target = await receiver(answerOk);
    await client().send({ method: 'GET', url: `${target.origin}/mo`, query: { message: 'Oui' } });
    assert.equal(target.requests[0]!.url, '/mo?message=Oui');
  });

  it('turns credentials in the URL into basic authentication', async () => {
    const target = await receiver(answerOk);
    await client().send({ method: 'POST', url: `http://us%40er:p%3Ass@127.0.0.1:${target.port}/cb`, body: '{}' });
    const expected = `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`;
    assert.equal(target.requests[0]!.headers.authorization, expected);
    assert.equal(target.requests[0]!.url, '/cb');
    await client().send({ method: 'POST', url: `http://a%zz:b@127.0.0.1:${target.port}/cb`, body: '{}' });
    assert.equal(target.requests[1]!.headers.authorization, `Basic ${Buffer.from('a%zz:b').toString('base64')}`);
  });

  it('refuses a GET with a body as a programming error', async () => {
    await assert.rejects(client().send({ method: 'GET', url: 'http://127.0.0.1:1/', body: '{}' }), TypeError);
  });
});

describe('WebhookHttpClient: outcomes', () => {
  async function statusReceiver(): Promise<Receiver> {
    return receiver((request, res) => {
      const status = Number(request.url.split('/')[2]);
      if (status >= 300 && status < 400) res.setHeader('location', '/followed');
      res.writeHead(status).end(status === 204 || status === 304 ? undefined : `answer ${status}`);
    });
  }

  const expectations: Array<[number, AttemptResult['outcome']]> = [
    [200, 'delivered'],
    [201, 'delivered'],
    [202, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [301, 'retry'],
    [302, 'retry'],
    [304, 'retry'],
    [307, 'retry'],
    [400, 'retry'],
    [401, 'retry'],
    [404, 'retry'],
    [409, 'retry'],
    [429, 'retry'],
    [410, 'gone'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
  ];

  it('maps 2xx to delivered, 410 to gone and every other status to retry', async () => {
    const target = await statusReceiver();
    const sender = client();
    for (const [status, outcome] of expectations) {
      const result = await sender.send({ method: 'POST', url: `${target.origin}/status/${status}`, body: '{}' });
      assert.equal(result.outcome, outcome, `HTTP ${status}`);
      assert.equal(result.httpStatus, status);
      assert.equal(result.error, outcome === 'delivered' ? null : `receiver answered HTTP ${status}`);
      const snippet = status === 204 || status === 304 ? null : `answer ${status}`;
      assert.equal(result.responseSnippet, snippet, `HTTP ${status}`);
    }
    assert.ok(!target.requests.some((request) => request.url === '/followed'), 'redirects are not followed');
    assert.equal(target.requests.length, expectations.length);
  });

  it('keeps only the start of a large response body', async () => {
    const big = `${'é'.repeat(10)}${'x'.repeat(200_000)}`;
    const target = await receiver((_request, res) => {
      res.end(big);
    });
    const result = await client().send({ method: 'POST', url: target.origin, body: '{}' });
    assert.equal(result.outcome, 'delivered');
    assert.equal(result.responseSnippet, big.slice(0, 1014)); // 10 two-byte characters + 1004 bytes = 1 KiB
  });

  it('reports connection refused as retry', async () => {
    const port = await closedPort();
    const result = await client().send({ method: 'POST', url: `http://127.0.0.1:${port}/`, body: '{}' });
    assert.equal(result.outcome, 'retry');
    assert.equal(result.httpStatus, null);
    assert.equal(result.responseSnippet, null);
    assert.match(result.error ?? '', /ECONNREFUSED/);
  });

  it('reports a receiver that never answers as a retry once the timeout passes', async () => {
    const target = await receiver(() => 'hang');
    const result = await client({ timeoutMs: 150 }).send({ method: 'POST', url: `${target.origin}/slow`, body: '{}' });
    assert.equal(result.outcome, 'retry');
    assert.equal(result.httpStatus, null);
    assert.equal(result.error, 'no answer within 150 ms');
    assert.equal(target.requests.length, 1, 'the request did arrive');
  });

  it('counts a 2xx whose body never ends as delivered', async () => {
    const target = await receiver((_request, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
    });
    // Long enough for the headers to arrive even on a loaded machine; the deadline then cuts the body short.
    const result = await client({ timeoutMs: 1_000 }).send({ method: 'POST', url: target.origin, body: '{}' });
    assert.equal(result.outcome, 'delivered');
    assert.equal(result.httpStatus, 200);
    assert.equal(result.responseSnippet, 'partial');
  });

  it('reports a name that does not resolve as retry', async () => {
    const lookupAll: LookupAll = async (hostname) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    };
    const result = await client({ lookupAll }).send({ method: 'POST', url: 'http://nowhere.test/', body: '{}' });
    assert.equal(result.outcome, 'retry');
    assert.equal(result.error, 'getaddrinfo ENOTFOUND nowhere.test');
  });

  it('refuses URLs that can never work', async () => {
    const sender = client();
    for (const [url, error] of [
      ['not a url', /invalid webhook URL: "not a url"/],
      ['', /invalid webhook URL: ""/],
      ['/relative/path', /invalid webhook URL/],
      ['ftp://example.com/x', /must use http or https, not ftp/],
      ['file:///etc/passwd', /must use http or https, not file/],
      ['javascript:alert(1)', /must use http or https, not javascript/],
    ] as const) {
      const result = await sender.send({ method: 'POST', url, body: '{}' });
      assert.equal(result.outcome, 'refused', url);
      assert.equal(result.httpStatus, null);
      assert.match(result.error ?? '', error);
    }
    assert.deepEqual(sender.openOrigins(), []);
  });
});

describe('WebhookHttpClient: private addresses', () => {
  it('refuses loopback, private and link-local destinations without connecting', async () => {
    const target = await receiver(answerOk);
    const sender = client({ allowPrivate: false });
    const literals = [
      `http://127.0.0.1:${target.port}/`,
      `http://[::1]:${target.port}/`,
      `http://[::ffff:127.0.0.1]:${target.port}/`,
      `http://2130706433:${target.port}/`, // 127.0.0.1 in decimal, normalised by the URL parser
      `http://0x7f.1:${target.port}/`,
      'http://10.1.2.3/hook',
      'https://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/hook',
      'http://0.0.0.0/',
    ];
    for (const url of literals) {
      const result = await sender.send({ method: 'POST', url, body: '{}' });
      assert.equal(result.outcome, 'refused', url);
      assert.match(result.error ?? '', /private, loopback, link-local or reserved address/, url);
    }
    assert.deepEqual(sender.openOrigins(), [], 'literal addresses are refused before any pool exists');

    const byName = await sender.send({ method: 'POST', url: `http://localhost:${target.port}/`, body: '{}' });
    assert.equal(byName.outcome, 'refused');
    assert.match(byName.error ?? '', /^localhost resolves to (127\.0\.0\.1|::1), which is a private/);
    assert.equal(target.connections, 0);
    assert.equal(target.requests.length, 0);
  });

  it('refuses a name when any of its addresses is private', async () => {
    const target = await receiver(answerOk);
    const lookupAll: LookupAll = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const result = await client({ allowPrivate: false, lookupAll }).send({
      method: 'POST',
      url: `http://rebind.test:${target.port}/`,
      body: '{}',
    });
    assert.equal(result.outcome, 'refused');
    assert.match(result.error ?? '', /rebind\.test resolves to 127\.0\.0\.1/);
    assert.equal(target.connections, 0);
  });

  it('connects to the address its own resolver vetted, keeping the name for the Host header', async () => {
    const target = await receiver(answerOk);
    const asked: string[] = [];
    const lookupAll: LookupAll = async (hostname) => {
      asked.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const result = await client({ lookupAll }).send({ method: 'POST', url: `http://receiver.test:${target.port}/x`, body: '{}' });
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.deepEqual(asked, ['receiver.test']);
    assert.equal(target.requests[0]!.headers.host, `receiver.test:${target.port}`);
  });

  it('delivers to localhost when private addresses are allowed', async () => {
    const target = await receiver(answerOk);
    const result = await client().send({ method: 'POST', url: `http://localhost:${target.port}/`, body: '{}' });
    assert.equal(result.outcome, 'delivered', result.error ?? '');
  });
});

describe('WebhookHttpClient: concurrency per origin', () => {
  it('keeps delivering to other origins while one receiver hangs', async () => {
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver(answerOk);
    const sender = client({ maxConcurrentPerHost: 2, timeoutMs: 30_000 });
    const settled: AttemptResult[] = [];
    const stuck = Array.from({ length: 5 }, (_, i) =>
      sender.send({ method: 'POST', url: `${hanging.origin}/hang/${i}`, body: '{}' }).then((result) => {
        settled.push(result);
        return result;
      }),
    );
    await eventually(() => hanging.requests.length === 2, 5_000);
    assert.equal(sender.pending(hanging.origin), 5);
    assert.equal(sender.pending(`${hanging.origin}/any/path`), 5, 'pending is per origin');

    for (let i = 0; i < 3; i++) {
      const result = await sender.send({ method: 'POST', url: `${healthy.origin}/ok/${i}`, body: '{}' });
      assert.equal(result.outcome, 'delivered');
    }
    assert.equal(healthy.requests.length, 3);
    assert.equal(settled.length, 0, 'the hanging attempts are still waiting');
    assert.equal(sender.pending(hanging.origin), 5);
    assert.equal(sender.pending(healthy.origin), 0);
    assert.equal(hanging.requests.length, 2, 'only two attempts at a time reach the hanging origin');

    await hanging.close(); // drops the two in flight; the three queued then fail to connect
    const results = await Promise.all(stuck);
    assert.ok(results.every((result) => result.outcome === 'retry'));
    assert.equal(sender.pending(hanging.origin), 0);
  });

  it('treats localhost and 127.0.0.1 as different origins', async () => {
    const target = await receiver(() => 'hang');
    const sender = client({ maxConcurrentPerHost: 1, maxQueuedPerHost: 0 });
    const first = sender.send({ method: 'POST', url: `${target.origin}/a`, body: '{}' });
    await eventually(() => target.requests.length === 1, 5_000);
    const sameOrigin = await sender.send({ method: 'POST', url: `${target.origin}/b`, body: '{}' });
    assert.equal(sameOrigin.outcome, 'retry');
    assert.equal(sameOrigin.error, `0 attempts already waiting for ${target.origin}`);
    const otherOrigin = sender.send({ method: 'POST', url: `http://localhost:${target.port}/c`, body: '{}' });
    await eventually(() => target.requests.length === 2, 5_000);
    assert.equal(target.requests[1]!.url, '/c');
    await target.close();
    await Promise.all([first, otherOrigin]);
  });

  it('turns attempts back at once when the origin queue is full', async () => {
    const target = await receiver(() => 'hang');
    const sender = client({ maxConcurrentPerHost: 1, maxQueuedPerHost: 2 });
    const waiting = [0, 1, 2].map((i) => sender.send({ method: 'POST', url: `${target.origin}/${i}`, body: '{}' }));
    await eventually(() => target.requests.length === 1, 5_000);
    assert.equal(sender.pending(target.origin), 3);
    const overflow = await sender.send({ method: 'POST', url: `${target.origin}/3`, body: '{}' });
    assert.deepEqual(overflow, {
      outcome: 'retry',
      httpStatus: null,
      latencyMs: 0,
      error: `2 attempts already waiting for ${target.origin}`,
      responseSnippet: null,
    });
    assert.equal(sender.pending(target.origin), 3);
    await target.close();
    await Promise.all(waiting);
  });

  it('bounds the queue across origins too', async () => {
    const first = await receiver(() => 'hang');
    const second = await receiver(() => 'hang');
    const sender = client({ maxConcurrentPerHost: 1, maxQueuedPerHost: 5, maxQueuedTotal: 1 });
    const inFlight = sender.send({ method: 'POST', url: first.origin, body: '{}' });
    const queued = sender.send({ method: 'POST', url: first.origin, body: '{}' });
    const secondInFlight = sender.send({ method: 'POST', url: second.origin, body: '{}' });
    await eventually(() => first.requests.length === 1 && second.requests.length === 1, 5_000);
    const overflow = await sender.send({ method: 'POST', url: second.origin, body: '{}' });
    assert.equal(overflow.outcome, 'retry');
    assert.equal(overflow.error, '1 webhook attempts already waiting in total');
    await Promise.all([first.close(), second.close()]);
    await Promise.all([inFlight, queued, secondInFlight]);
  });

  it('reports nothing pending for unknown or malformed origins', () => {
    const sender = client();
    assert.equal(sender.pending('http://127.0.0.1:9/'), 0);
    assert.equal(sender.pending('not a url'), 0);
  });
});

describe('WebhookHttpClient: lifecycle', () => {
  it('closes the pool of an origin that stays idle', async () => {
    const target = await receiver(answerOk);
    const sender = client({ idlePoolMs: 20 });
    await sender.send({ method: 'POST', url: target.origin, body: '{}' });
    assert.deepEqual(sender.openOrigins(), [target.origin]);
    await eventually(() => sender.openOrigins().length === 0, 5_000);
    const again = await sender.send({ method: 'POST', url: target.origin, body: '{}' });
    assert.equal(again.outcome, 'delivered', 'a new pool is opened on demand');
  });

  it('close turns away waiting attempts and later sends', async () => {
    const target = await receiver(() => 'hang');
    const sender = new WebhookHttpClient({ allowPrivate: true, timeoutMs: 30_000, maxConcurrentPerHost: 1 });
    const inFlight = sender.send({ method: 'POST', url: target.origin, body: '{}' });
    const queued = sender.send({ method: 'POST', url: target.origin, body: '{}' });
    await eventually(() => target.requests.length === 1, 5_000);
    const closing = sender.close();
    const turnedAway = await queued;
    assert.equal(turnedAway.outcome, 'retry');
    assert.equal(turnedAway.error, 'webhook client is closed');
    const later = await sender.send({ method: 'POST', url: target.origin, body: '{}' });
    assert.equal(later.error, 'webhook client is closed');
    assert.deepEqual(sender.openOrigins(), []);
    await target.close();
    assert.equal((await inFlight).outcome, 'retry');
    await closing;
    assert.equal(target.requests.length, 1);
  });

  it('rejects nonsensical options', () => {
    assert.throws(() => new WebhookHttpClient({ allowPrivate: false, timeoutMs: 0 }), /timeoutMs must be a positive integer/);
    assert.throws(() => new WebhookHttpClient({ allowPrivate: false, maxConcurrentPerHost: 1.5 }), /maxConcurrentPerHost/);
    assert.throws(() => new WebhookHttpClient({ allowPrivate: false, maxQueuedPerHost: -1 }), /maxQueuedPerHost/);
    assert.throws(() => new WebhookHttpClient({ allowPrivate: false, idlePoolMs: Number.NaN }), /idlePoolMs/);
  });
});

after(async () => {
  await Promise.all(clients.map((created) => created.close()));
});

/** HTTP servers on 127.0.0.1 (one origin each) that answer 200 after `delayMs`, keeping connections alive. */
async function origins(count: number, delayMs: number): Promise<{ origins: string[]; ports: Set<number>; close(): Promise<void> }> {
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => setTimeout(() => res.writeHead(200).end('ok'), delayMs));
      });
      server.keepAliveTimeout = 30_000;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  return {
    origins: ports.map((p) => `http://127.0.0.1:${p}`),
    ports: new Set(ports),
    async close() {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}

/**
 * The most connections this process held at once to each group of ports while `work` ran, read from /proc (the
 * client's own sockets: a server in the same process sees a closed connection a moment later).
 */
async function mostConnections<T>(groups: Array<Set<number>>, work: () => Promise<T>): Promise<{ result: T; most: number[] }> {
  const most = groups.map(() => 0);
  const all = new Set(groups.flatMap((g) => [...g]));
  const look = () => {
    const counts = connectionsTo(all);
    groups.forEach((g, i) => (most[i] = Math.max(most[i]!, total(counts, g))));
  };
  const timer = setInterval(look, 2);
  try {
    const result = await work();
    look();
    return { result, most };
  } finally {
    clearInterval(timer);
  }
}

describe('WebhookHttpClient: sockets bounded in all and per tenant', () => {
  it('many origins of one tenant: its sockets, idle ones included, stay within its share, and every attempt is delivered', async () => {
    const a = await origins(30, 20);
    const b = await origins(5, 20);
    try {
      const sender = client({ maxConcurrentPerHost: 4, maxSockets: 6, maxSocketsPerTenant: 4, keepAliveMs: 10_000 });
      const { result: results, most } = await mostConnections([a.ports, b.ports, new Set([...a.ports, ...b.ports])], () =>
        Promise.all([
          ...Array.from({ length: 90 }, (_, i) => sender.send({ method: 'POST', url: `${a.origins[i % 30]}/a/${i}`, body: '{}', tenant: 'org-a' })),
          ...Array.from({ length: 15 }, (_, i) => sender.send({ method: 'POST', url: `${b.origins[i % 5]}/b/${i}`, body: '{}', tenant: 'org-b' })),
        ]),
      );
      assert.deepEqual([...new Set(results.map((r) => r.outcome))], ['delivered'], JSON.stringify(results.find((r) => r.outcome !== 'delivered')));
      const [ofA, ofB, inAll] = most;
      assert.ok(ofA! <= 4, `tenant a had ${ofA} sockets open at once (share 4)`);
      assert.ok(ofB! <= 4, `tenant b had ${ofB} sockets open at once (share 4)`);
      assert.ok(inAll! <= 6, `${inAll} sockets open at once (6 in all)`);
      assert.ok(ofA! >= 3 && inAll! >= 5, `the shares were used (${ofA}, ${inAll})`);
      const usage = sender.usage();
      assert.ok(usage.sockets <= 6 && usage.active === 0, JSON.stringify(usage));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a tenant with a long queue does not hold back another: they take turns', async () => {
    const slow = await origins(20, 100);
    const other = await origins(1, 0);
    try {
      const sender = client({ maxConcurrentPerHost: 2, maxSockets: 4, maxSocketsPerTenant: 4 });
      const flood = Array.from({ length: 200 }, (_, i) => sender.send({ method: 'POST', url: `${slow.origins[i % 20]}/${i}`, body: '{}', tenant: 'flood' }));
      await eventually(() => sender.usage().active === 4, 5_000, 'the flood holding every slot');
      const started = Date.now();
      const mine = await Promise.all(
        Array.from({ length: 5 }, (_, i) => sender.send({ method: 'POST', url: `${other.origins[0]}/${i}`, body: '{}', tenant: 'quiet' })),
      );
      const waited = Date.now() - started;
      assert.ok(mine.every((r) => r.outcome === 'delivered'));
      // 200 attempts of 100 ms on 4 slots take 5 s: taking turns, the other tenant's five go within a few of them.
      assert.ok(waited < 2_000, `the other tenant waited ${waited} ms`);
      assert.ok((await Promise.all(flood)).every((r) => r.outcome === 'delivered'));
    } finally {
      await slow.close();
      await other.close();
    }
  });

  it('idle sockets make room: a new origin does not wait for another origin’s keep-alive to end', async () => {
    const targets = await origins(3, 0);
    try {
      const sender = client({ maxSockets: 2, maxSocketsPerTenant: 2, keepAliveMs: 30_000, idlePoolMs: 60_000 });
      for (const origin of targets.origins.slice(0, 2)) assert.equal((await sender.send({ method: 'POST', url: origin, body: '{}' })).outcome, 'delivered');
      assert.equal(sender.usage().sockets, 2, 'two idle sockets kept');
      assert.equal(total(connectionsTo(targets.ports)), 2);
      const started = Date.now();
      const { result: third, most } = await mostConnections([targets.ports], () => sender.send({ method: 'POST', url: targets.origins[2]!, body: '{}' }));
      assert.equal(third.outcome, 'delivered');
      assert.ok(Date.now() - started < 2_000, `delivered after ${Date.now() - started} ms`);
      assert.ok(most[0]! <= 2, `${most[0]} sockets at once`);
      assert.ok(sender.usage().sockets <= 2);
    } finally {
      await targets.close();
    }
  });
});
