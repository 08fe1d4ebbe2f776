// Operator connections in tests: the admin API, a route check, campaigns, and a network that can be cut.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { request, type Tenant, type TestServer } from './server.ts';
import { eventually } from './wait.ts';

/**
 * A stand-in for the network between Tern and its upstream: it can be cut and restored on the same port, and can hold
 * each answer a while after the upstream gave it (a slow network: the upstream has acted, the sender does not know).
 */
export async function cuttableProxy(
  target: string,
  opts: { answerDelayMs?: number } = {},
): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((req, res) => {
        const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
          const relay = () => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          };
          if (opts.answerDelayMs) setTimeout(relay, opts.answerDelayMs);
          else relay();
        });
        out.on('error', () => res.destroy());
        req.pipe(out);
      });
      server.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  const shut = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
      server = null;
    });
  await open();
  return { url: `http://127.0.0.1:${port}`, cut: shut, restore: open, close: shut };
}

/** A server reachable over HTTP with the operator key (in this process or another). */
export type AdminReachable = Pick<TestServer, 'url' | 'adminKey'>;

export const admin = (server: AdminReachable, method: string, path: string, body?: unknown) => request(server, method, path, { key: server.adminKey, body });

export async function connector(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const r = await admin(server, 'POST', '/admin/v1/connectors', body);
  assert.equal(r.status, 201, r.text);
  return r.body.connectorId;
}

export async function route(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const r = await admin(server, 'POST', '/admin/v1/routes', body);
  assert.equal(r.status, 201, r.text);
  return r.body.routeId;
}

/** Waits until the router of `server` sends `to` through `name` first. */
export async function routedTo(server: AdminReachable, to: string, name: string): Promise<void> {
  await eventually(
    async () => (await admin(server, 'POST', '/admin/v1/routes/test', { to })).body.candidates?.[0]?.name === name,
    15_000,
    `${to} routed to ${name}`,
  );
}

export async function campaign(server: TestServer, t: Tenant, numbers: string[]): Promise<string> {
  const r = await request(server, 'POST', '/sms/v1/campaigns', {
    key: t.key,
    body: { recipients: numbers.map((to) => ({ to })), body: { text: 'Routed' } },
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.errors?.length ?? 0, 0, JSON.stringify(r.body.errors?.slice(0, 3)));
  return r.body.campaignId;
}
