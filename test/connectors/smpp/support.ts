import assert from 'node:assert/strict';
import { admin, type AdminReachable, connector, route, routedTo } from '../../support/connectors.ts';
import { request, type Tenant, type TestServer } from '../../support/server.ts';
import { type SmscBehaviour, TestSmsc } from '../../support/smsc.ts';
import { eventually } from '../../support/wait.ts';

export const SECRET_KEY = 'smpp-connector-test-secret-key-0123456789';

export interface Operator {
  smsc: TestSmsc;
  connectorId: string;
  name: string;
  /** A number this operator's route takes. */
  number(i: number): string;
}

/** A test SMSC, an SMPP connector bound to it, and a route for `prefix` (11-digit numbers under it). */
export async function smppOperator(
  server: TestServer,
  name: string,
  prefix: string,
  settings: Record<string, unknown> = {},
  behaviour: Partial<SmscBehaviour> = {},
  routeExtra: Record<string, unknown> = {},
): Promise<Operator> {
  const smsc = await TestSmsc.start(behaviour);
  const connectorId = await connector(server, {
    name,
    type: 'SMPP',
    host: '127.0.0.1',
    port: smsc.port,
    systemId: 'tern',
    password: 'secret',
    reconnectMinSeconds: 1,
    reconnectMaxSeconds: 2,
    ...settings,
  });
  await route(server, { name, priority: 1, match: { prefix }, connectors: [{ connector: name }], ...routeExtra });
  const number = (i: number) => `${prefix}${String(i).padStart(11 - prefix.length, '0')}`;
  if (behaviour.bindStatus === undefined || behaviour.bindStatus === 0) await routedTo(server, number(5), name);
  return { smsc, connectorId, name, number };
}

export async function live(server: AdminReachable, connectorId: string): Promise<Record<string, any>> {
  const r = await admin(server, 'GET', `/admin/v1/connectors/${connectorId}`);
  assert.equal(r.status, 200, r.text);
  return r.body.live;
}

export async function send(server: TestServer, t: Tenant, to: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await request(server, 'POST', '/sms/v1/messages', { key: t.key, body: { recipient: { to }, body: { text }, from: 'Tern', ...extra } });
  assert.equal(r.status, 201, r.text);
  return r.body.messageId;
}

export async function statuses(
  server: TestServer,
  ids: string[],
): Promise<Array<{ id: string; status: string; status_detail: string | null; charged: number; connector: string | null }>> {
  return server.app.store.db.selectFrom('messages').select(['id', 'status', 'status_detail', 'charged', 'connector']).where('id', 'in', ids).execute();
}

const FINAL = new Set(['DELIVERED', 'UNDELIVERED', 'UNDELIVERABLE']);

/** Waits until every message is final; answers their rows. */
export async function allFinal(server: TestServer, ids: string[], ms = 30_000) {
  return eventually(
    async () => {
      const rows = await statuses(server, ids);
      return rows.length === ids.length && rows.every((r) => FINAL.has(r.status)) ? rows : undefined;
    },
    ms,
    `${ids.length} messages final`,
  );
}
