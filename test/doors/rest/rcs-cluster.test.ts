import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createTenant, forEachDialect, request, startTestServer, type Tenant, type TestServer } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

const skip = process.env.TERN_TEST_DATABASE_URL ? false : 'PostgreSQL not available: TERN_TEST_DATABASE_URL is not set';

const CONVERSATION = 0.09;
const ROUNDS = 10;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

type RcsTenant = Tenant & { agent: string };

async function rcsTenant(server: TestServer, balance: number): Promise<RcsTenant> {
  const agent = `Agent${randomBytes(3).toString('hex')}`;
  const t = await createTenant(server, { type: 'RCS', balance, channel: { defaultFromField: agent } });
  return { ...t, agent };
}

/** A user's number for a round: RCS-capable in the simulator (it does not end in 9). */
const userOf = (prefix: string, round: number) => `336${prefix}${String(round).padStart(5, '0')}1`;

async function injectMo(server: TestServer, from: string, agent: string, text: string): Promise<void> {
  const r = await request(server, 'POST', '/admin/v1/simulator/rcs/mo', { key: server.adminKey, body: { from, to: agent, body: { type: 'TEXT', text } } });
  assert.equal(r.status, 202, r.text);
}

async function sendTo(server: TestServer, t: Tenant, user: string, text: string) {
  const r = await request(server, 'POST', '/rcs/v1/messages', { key: t.key, body: { recipient: { to: user }, body: { type: 'TEXT', text } } });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function conversationsOf(server: TestServer, t: Tenant, user: string): Promise<any[]> {
  const r = await request(server, 'GET', `/rcs/v1/conversations?searchBy[recipient.to]=%2B${user}&pageSize=100`, { key: t.key });
  assert.equal(r.status, 200, r.text);
  return r.body.items;
}

async function openedByMo(server: TestServer, t: RcsTenant, user: string): Promise<any> {
  await injectMo(server, user, t.agent, 'Hello');
  return eventually(async () => (await conversationsOf(server, t, user))[0], 10_000, `the conversation of ${user}`);
}

async function balance(server: TestServer, t: Tenant): Promise<number> {
  const r = await request(server, 'GET', `/admin/v1/organisations/${t.organisationId}`, { key: server.adminKey });
  return r.body.balance.amount;
}

/** The organisation's RCS consumption of today by price kind, as the consumption API answers it. */
async function consumedConversations(server: TestServer, t: Tenant): Promise<unknown> {
  const r = await request(server, 'GET', '/commons/v1/consumptions?searchBy[channel.type]=RCS&searchBy[periodType]=DAY', { key: t.key });
  assert.equal(r.status, 200, r.text);
  return r.body.items[0]?.priceKinds.find((k: any) => k.kind === 'CONVERSATION');
}

/**
 * Each round, a user's MO opens a conversation, then every sender sends into it at once: one of the messages takes
 * the conversation's charge, the others are free.
 */
async function concurrentSendsTakeOneCharge(opener: TestServer, senders: TestServer[], t: RcsTenant, prefix: string): Promise<void> {
  const start = await balance(opener, t);
  for (let round = 0; round < ROUNDS; round++) {
    const user = userOf(prefix, round);
    const conversation = await openedByMo(opener, t, user);
    const sent = await Promise.all(senders.map((s, i) => sendTo(s, t, user, `reply ${round}.${i}`)));
    assert.deepEqual(
      sent.map((m) => [m.price.kind, m.conversationId]),
      sent.map(() => ['CONVERSATION', conversation.conversationId]),
      `round ${round}`,
    );
    assert.equal(sent.filter((m) => m.price.amount === CONVERSATION).length, 1, `round ${round}: ${JSON.stringify(sent.map((m) => m.price))}`);
    assert.equal(sent.filter((m) => m.price.amount === 0).length, senders.length - 1, `round ${round}`);
    const conversations = await conversationsOf(opener, t, user);
    assert.equal(conversations.length, 1, `round ${round}: one conversation`);
    assert.equal(conversations[0].messageCount, 1 + senders.length, `round ${round}: the MO and every reply`);
    assert.deepEqual(conversations[0].price, { amount: CONVERSATION, currency: 'EUR', kind: 'CONVERSATION' }, `round ${round}`);
  }
  assert.equal(await balance(opener, t), round6(start - ROUNDS * CONVERSATION));
  assert.deepEqual(await consumedConversations(opener, t), {
    kind: 'CONVERSATION',
    quantity: ROUNDS,
    messages: ROUNDS * senders.length,
    price: { amount: round6(ROUNDS * CONVERSATION), currency: 'EUR' },
  });
}

/** Each round, MOs of one user arrive at once (one per entry of `nodes`): they all land in one conversation. */
async function concurrentMosOpenOneConversation(nodes: TestServer[], t: RcsTenant, prefix: string): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    const user = userOf(prefix, round);
    await Promise.all(nodes.map((node, i) => injectMo(node, user, t.agent, `MO ${round}.${i}`)));
    const conversations = await conversationsOf(nodes[0]!, t, user);
    assert.equal(conversations.length, 1, `round ${round}: ${conversations.length} conversations opened`);
    assert.equal(conversations[0].status, 'OPEN');
    assert.equal(conversations[0].messageCount, nodes.length, `round ${round}: every MO in the conversation`);
    assert.ok(conversations[0].messages.every((m: any) => m.direction === 'MO'));
    // The agent's reply joins it and pays for it.
    const reply = await sendTo(nodes[0]!, t, user, 'Thanks');
    assert.deepEqual([reply.price.amount, reply.conversationId], [CONVERSATION, conversations[0].conversationId]);
  }
}

describe('RCS conversations across a cluster [postgres]', { skip }, () => {
  let first: TestServer;
  let second: TestServer;
  let sending: RcsTenant;
  let replying: RcsTenant;
  before(async () => {
    first = await startTestServer('postgres');
    // Created before the second node starts, so it routes their agents' MOs from its first read of the channels.
    sending = await rcsTenant(first, 10);
    replying = await rcsTenant(first, 10);
    second = await startTestServer('postgres', { TERN_DATABASE_URL: first.app.config.databaseUrl });
  });
  after(async () => {
    await second?.stop();
    await first?.stop();
  });

  test('two nodes sending into one new conversation at once charge it once', async () => {
    await concurrentSendsTakeOneCharge(first, [first, second], sending, '41');
  });

  test('MOs of one user arriving on both nodes at once open one conversation', async () => {
    await concurrentMosOpenOneConversation([first, second, first, second], replying, '42');
  });
});

forEachDialect('RCS conversations under concurrency on one node', (dialect) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer(dialect);
  });
  after(async () => {
    await server.stop();
  });

  test('concurrent sends into one new conversation charge it once', async () => {
    const t = await rcsTenant(server, 10);
    await concurrentSendsTakeOneCharge(server, [server, server, server], t, '43');
  });

  test('concurrent MOs of one user open one conversation', async () => {
    const t = await rcsTenant(server, 10);
    await concurrentMosOpenOneConversation([server, server, server, server], t, '44');
  });
});
