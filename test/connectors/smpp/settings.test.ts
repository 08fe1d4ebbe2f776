import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SMPP_KIND } from '../../../src/connectors/smpp/kind.ts';
import { CoreError } from '../../../src/core/errors.ts';

function refused(settings: Record<string, unknown>, secrets: Record<string, string> = { password: 'pw' }): string {
  try {
    SMPP_KIND.validate(settings, secrets);
  } catch (err) {
    assert.ok(err instanceof CoreError);
    assert.equal(err.kind, 'INVALID_REQUEST');
    return err.detail;
  }
  return assert.fail('accepted');
}

describe('SMPP connector settings', () => {
  it('fill in what an operator usually means', () => {
    const { settings } = SMPP_KIND.validate({ host: 'smsc.example.net', systemId: 'tern' }, { password: 'pw' });
    assert.deepEqual(
      {
        port: settings.port,
        bindMode: settings.bindMode,
        binds: settings.binds,
        window: settings.window,
        longMessages: settings.longMessages,
        dataCoding: settings.dataCoding,
        registeredDelivery: settings.registeredDelivery,
        submitIdFormat: settings.submitIdFormat,
        tls: settings.tls,
      },
      { port: 2775, bindMode: 'TRX', binds: 1, window: 10, longMessages: 'UDH8', dataCoding: 0, registeredDelivery: 1, submitIdFormat: 'ASIS', tls: false },
    );
  });

  it('refuse what cannot work, naming the field', () => {
    assert.match(refused({ systemId: 'tern' }), /^host: is required/);
    assert.match(refused({ host: 'h', systemId: 'a-system-id-too-long' }), /^systemId: at most 15/);
    assert.match(refused({ host: 'h', systemId: 't', port: 70_000 }), /^port: a whole number/);
    assert.match(refused({ host: 'h', systemId: 't', bindMode: 'TX' }), /^bindMode: one of "TRX", "TX\+RX"/);
    assert.match(refused({ host: 'h', systemId: 't', longMessages: 'UDH' }), /^longMessages: one of/);
    assert.match(refused({ host: 'h', systemId: 't', dataCoding: 8 }), /^dataCoding: one of 0, 1, 3/);
    assert.match(refused({ host: 'h', systemId: 't', receiptIdFormat: 'hex' }), /^receiptIdFormat: one of/);
    assert.match(refused({ host: 'h', systemId: 't', reconnectMinSeconds: 10, reconnectMaxSeconds: 5 }), /^reconnectMaxSeconds/);
    assert.match(refused({ host: 'h', systemId: 't', windowSize: 5 }), /^windowSize: is not a setting/);
    assert.match(refused({ host: 'h', systemId: 't' }, {}), /^password: is required/);
    assert.match(refused({ host: 'h', systemId: 't\u0000' }), /^systemId: at most 15 printable ASCII/);
  });
});
