import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TenantAdmission } from '../../../src/core/tenancy/admission.ts';

/** Whether `p` has settled once the microtasks queued so far have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('turns between organisations', () => {
  test('an organisation alone on the node is never held back', async () => {
    const admission = new TenantAdmission(2);
    const ends = await Promise.all(Array.from({ length: 10 }, () => admission.enter('flood')));
    assert.equal(admission.waiting, 0);
    for (const end of ends) end();
  });

  test('while another organisation has a request in progress, one has at most its share in progress; the next waits for one of its own to end', async () => {
    let waits = 0;
    const admission = new TenantAdmission(2, 100, () => waits++);
    const quiet = await admission.enter('quiet');
    const a = await admission.enter('flood');
    const b = await admission.enter('flood');
    const c = admission.enter('flood');
    const d = admission.enter('flood');
    assert.equal(await settled(c), false, 'the third request of the flood waits');
    assert.equal(admission.waiting, 2);
    assert.equal(waits, 2);
    // Another organisation still comes in at once.
    const other = await admission.enter('other');
    a();
    assert.equal(await settled(c), true, 'an end of its own lets the next one in, in order');
    assert.equal(await settled(d), false);
    a(); // ending twice ends once
    assert.equal(await settled(d), false);
    b();
    assert.equal(await settled(d), true);
    quiet();
    other();
    (await c)();
    (await d)();
    assert.equal(admission.waiting, 0);
  });

  test('an organisation seen a moment ago counts as present, one seen long ago does not', async () => {
    const admission = new TenantAdmission(1, 100);
    (await admission.enter('quiet', 1_000))();
    const first = await admission.enter('flood', 1_050);
    assert.equal(await settled(admission.enter('flood', 1_060)), false, 'held back: the quiet one came in 60 ms ago');
    first();
    const later = new TenantAdmission(1, 100);
    (await later.enter('quiet', 1_000))();
    const one = await later.enter('flood', 1_200);
    const two = later.enter('flood', 1_210);
    assert.equal(await settled(two), true, 'alone: the quiet one came in 210 ms ago and has nothing in progress');
    one();
    (await two)();
  });

  test('waiting requests go in when the others have left, at the next end of their own', async () => {
    const admission = new TenantAdmission(1, 0);
    const quiet = await admission.enter('quiet');
    const first = await admission.enter('flood');
    const second = admission.enter('flood');
    const third = admission.enter('flood');
    assert.equal(await settled(second), false);
    quiet();
    first();
    // Alone now: both waiting requests go in, not only the next one.
    assert.equal(await settled(second), true);
    assert.equal(await settled(third), true);
    (await second)();
    (await third)();
  });

  test('no turns with a share of 0', async () => {
    const admission = new TenantAdmission(0);
    await admission.enter('quiet');
    await Promise.all(Array.from({ length: 5 }, () => admission.enter('flood')));
    assert.equal(admission.waiting, 0);
  });
});
