import { SmppConnector } from '../../../src/connectors/smpp/connector.ts';
import { parseSmppSettings } from '../../../src/connectors/smpp/settings.ts';
import { TestSmsc } from '../../support/smsc.ts';
import { connectorHarness } from '../harness.ts';

const bad = (field: string, reason: string): never => {
  throw new Error(`${field}: ${reason}`);
};

connectorHarness('SMPP', {
  idempotentSubmit: false,
  async create(name) {
    const smsc = await TestSmsc.start();
    const connector = new SmppConnector(name, parseSmppSettings({ host: '127.0.0.1', port: smsc.port, systemId: 'tern', binds: 2 }, bad), 'secret');
    return {
      connector,
      operator: {
        deliverable: ['33612345678', '33612345679', '33612345680'],
        async settle(ctx) {
          // Every submit the SMSC took has its receipt among the events.
          const end = Date.now() + 5_000;
          while (ctx.events.filter((e) => e.kind === 'receipt').length < smsc.submits.length) {
            if (Date.now() > end) throw new Error('receipts did not come');
            await new Promise((r) => setTimeout(r, 10));
          }
        },
        async sendMo(_ctx, _connector, mo) {
          await smsc.mo(mo.from, mo.to, mo.text);
        },
        close: () => smsc.close(),
      },
    };
  },
});
