// `tern serve --demo`: the demo organisation's SMS, RCS and VOICE channels with a key each, what the start prints
// about them (requests that work as pasted), a lost key replaced through the admin API, and later starts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { createApp, type TernApp } from '../../../src/app/index.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { DEMO_SMS_NUMBER } from '../../../src/core/tenancy/bootstrap.ts';
import { putSetting } from '../../../src/store/settings.ts';
import { type Announcement, startupAnnouncements } from '../../../src/startup-report.ts';
import { forEachDialect, freshDatabase, request, TEST_SECRET_KEY, UNLIMITED } from '../../support/server.ts';
import { eventually } from '../../support/wait.ts';

interface Running {
  app: TernApp;
  url: string;
}

async function startDemo(databaseUrl: string, env: Record<string, string> = {}): Promise<Running> {
  const config = loadConfig({
    TERN_HTTP_HOST: '127.0.0.1',
    TERN_HTTP_PORT: '0',
    TERN_SMPP_HOST: '127.0.0.1',
    TERN_SMPP_PORT: '0',
    TERN_DATABASE_URL: databaseUrl,
    TERN_LOG_LEVEL: 'silent',
    TERN_SECRET_KEY: TEST_SECRET_KEY,
    TERN_RATE_LIMITS: UNLIMITED,
    TERN_WEBHOOK_ALLOW_PRIVATE: 'true',
    ...env,
  });
  const app = await createApp(config, { demo: true, logger: pino({ level: 'silent' }) });
  const { httpPort } = await app.start();
  return { app, url: `http://127.0.0.1:${httpPort}` };
}

function announce(run: Running, adminKeyConfigured: boolean): Announcement[] {
  return startupAnnouncements({ base: run.url, adminKey: run.app.adminKey, adminKeyConfigured, demo: run.app.demo });
}

/** Runs a printed `curl -s -H 'X-Api-Key: …' -H 'Content-Type: application/json' -d '…' URL` with fetch. */
async function paste(example: string): Promise<{ status: number; body: any }> {
  const oneLine = example.replace(/\\\n\s*/g, '');
  const key = /-H 'X-Api-Key: ([^']+)'/.exec(oneLine)?.[1];
  const m = /-d '([^']*)' (\S+)$/.exec(oneLine);
  assert.ok(key && m, `not a request to paste: ${example}`);
  const res = await fetch(m[2]!, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: m[1] });
  return { status: res.status, body: await res.json() };
}

forEachDialect('Demo organisation', (dialect) => {
  let database: { url: string; cleanup(): Promise<void> };
  before(async () => {
    database = await freshDatabase(dialect);
  });
  after(async () => {
    await database.cleanup();
  });

  test('the first start makes SMS, RCS and VOICE channels with a key each, prints requests that work as pasted, and a lost key can be replaced', async () => {
    const run = await startDemo(database.url);
    try {
      const demo = run.app.demo!;
      assert.deepEqual(
        demo.channels.map((c) => c.type),
        ['SMS', 'RCS', 'VOICE'],
      );
      assert.equal(demo.defaultCountry, 'FR');
      assert.equal(demo.timeZone, 'Europe/Paris');
      for (const c of demo.channels) assert.match(c.apiKey ?? '', /^tern_/, `${c.type} key`);
      assert.ok(run.app.adminKey.generated, 'without TERN_ADMIN_KEY an operator key is made and shown');

      const said = announce(run, false);
      const text = said.flatMap((a) => a.lines).join('\n');
      assert.ok(text.includes(run.app.adminKey.generated!), 'the operator key is printed');
      for (const c of demo.channels) {
        assert.ok(text.includes(c.channelId) && text.includes(c.apiKey!), `${c.type} channel and key are printed`);
        const record = said.find((a) => a.fields.type === c.type)!;
        assert.equal(record.showsKey, true);
        assert.ok(!JSON.stringify(record.fields).includes(c.apiKey!), `${c.type}: the fields a JSON record carries hold no key`);
        assert.match(String(record.fields.example), /X-Api-Key: <key>/);
        assert.equal(record.fields.channelId, c.channelId);
        const sent = await paste(record.example!);
        assert.equal(sent.status, 201, `${c.type}: ${JSON.stringify(sent.body)}`);
        assert.equal(sent.body.channel.type, c.type);
      }
      const sms = await paste(said.find((a) => a.fields.type === 'SMS')!.example!);
      assert.equal(sms.body.recipient.to, '33612345678', 'the demo reads national numbers as French');
      const rcs = demo.channels.find((c) => c.type === 'RCS')!;
      const rcsChannel = await request({ url: run.url }, 'GET', `/admin/v1/channels/${rcs.channelId}`, { key: run.app.adminKey.generated! });
      assert.equal(rcsChannel.body.fallbackSmsChannelId, demo.channels[0]!.channelId, 'RCS falls back to the demo SMS channel');

      // The SMS channel has a number: the simulator's inbound SMS to it reaches the channel, not the unrouted list.
      const smsKey = demo.channels[0]!.apiKey!;
      const mo = await request({ url: run.url }, 'POST', '/admin/v1/simulator/mo', {
        key: run.app.adminKey.generated!,
        body: { from: '33612340099', to: DEMO_SMS_NUMBER, text: 'Reply to the demo' },
      });
      assert.ok(mo.status < 300, mo.text);
      await eventually(
        async () => {
          const got = await request({ url: run.url }, 'GET', '/sms/v1/messages?searchBy[direction]=MO', { key: smsKey });
          return got.body.items.some((m: any) => m.body.text === 'Reply to the demo');
        },
        10_000,
        'the inbound SMS on the demo channel',
      );
      const unrouted = await request({ url: run.url }, 'GET', '/admin/v1/inbound/unrouted', { key: run.app.adminKey.generated! });
      assert.equal(unrouted.body.items.length, 0, unrouted.text);

      // Lost key: the printed admin call gives a new one, which works at once.
      const reissue = said.find((a) => String(a.fields.example ?? '').includes('/credentials'))!;
      assert.ok(!JSON.stringify(said.map((a) => a.fields)).includes(run.app.adminKey.generated!), 'no JSON field holds the operator key');
      assert.match(String(reissue.fields.example), /X-Api-Key: <operator key>/);
      const issued = await paste(reissue.example!);
      assert.equal(issued.status, 201, JSON.stringify(issued.body));
      assert.match(issued.body.value, /^tern_/);
      const channels = await request({ url: run.url }, 'GET', '/commons/v1/channels', { key: issued.body.value });
      assert.equal(channels.status, 200);
      assert.ok(
        channels.body.items.some((c: any) => c.channelId === demo.channels[0]!.channelId),
        "the new key is the SMS channel's",
      );
    } finally {
      await run.app.stop();
    }

    // A later start finds the same channels and shows no key again, but still how to get a new one.
    const again = await startDemo(database.url, { TERN_ADMIN_KEY: 'operator-key-0123456789' });
    try {
      const demo = again.app.demo!;
      assert.deepEqual(
        demo.channels.map((c) => c.apiKey),
        [null, null, null],
      );
      const said = announce(again, true);
      const text = said.flatMap((a) => a.lines).join('\n');
      assert.doesNotMatch(text, /X-Api-Key: tern_[A-Za-z0-9_-]{20,}/, 'no customer key is printed twice');
      assert.match(text, /its key was shown when it was created/);
      assert.match(text, /X-Api-Key: \$TERN_ADMIN_KEY/);
      assert.ok(
        said.every((a) => !a.showsKey),
        'a later start shows no key',
      );
      const issued = await paste(
        String(said.find((a) => String(a.fields.example ?? '').includes('/credentials'))!.fields.example).replace('$TERN_ADMIN_KEY', 'operator-key-0123456789'),
      );
      assert.equal(issued.status, 201);
    } finally {
      await again.app.stop();
    }
  });

  test('a demo made by an earlier version (SMS only) gets its RCS and VOICE channels and the French default country', async () => {
    const older = await freshDatabase(dialect);
    try {
      const first = await startDemo(older.url, { TERN_ADMIN_KEY: 'operator-key-0123456789' });
      const { tenancy } = first.app.services;
      const org = await tenancy.createOrganisation({ name: 'Demo organisation' });
      const sms = await tenancy.createChannel(org.id, { name: 'Demo SMS', type: 'SMS', flow: 'TRANSACTIONAL' });
      await putSetting(first.app.store.db, 'demo', JSON.stringify({ organisationId: org.id, channelId: sms.id }));
      await first.app.stop();

      const upgraded = await startDemo(older.url, { TERN_ADMIN_KEY: 'operator-key-0123456789' });
      try {
        const demo = upgraded.app.demo!;
        assert.equal(demo.organisationId, org.id);
        assert.deepEqual(
          demo.channels.map((c) => [c.type, c.apiKey === null]),
          [
            ['SMS', true],
            ['RCS', false],
            ['VOICE', false],
          ],
        );
        assert.equal(demo.channels[0]!.channelId, sms.id);
        const smsNow = await upgraded.app.services.tenancy.readChannel(upgraded.app.store.db, sms.id);
        assert.deepEqual(smsNow!.fromFieldList, ['Tern', DEMO_SMS_NUMBER], 'the older demo SMS channel gets its number');
        assert.equal(demo.defaultCountry, 'FR');
        const text = announce(upgraded, true)
          .flatMap((a) => a.lines)
          .join('\n');
        assert.ok(text.includes(demo.channels[1]!.apiKey!) && text.includes(demo.channels[2]!.apiKey!), 'the new keys are shown');
      } finally {
        await upgraded.app.stop();
      }
    } finally {
      await older.cleanup();
    }
  });
});
