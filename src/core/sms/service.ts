import type { Channel } from '../../store/channels.ts';
import type { MessageRow } from '../../store/messages.ts';
import type { PreparedMessage } from '../messaging/accept.ts';
import type { MessagingService } from '../messaging/service.ts';
import { prepareSms, type SmsSendInput } from './prepare.ts';

/** SMS on the one messaging pipeline: each message validated and priced here, then accepted like any other. */
export class SmsService {
  constructor(private readonly messaging: MessagingService) {}

  async send(channel: Channel, input: SmsSendInput, afterInsert?: PreparedMessage['afterInsert'], now = Date.now()): Promise<MessageRow> {
    const prepared = await prepareSms(channel, input, await this.messaging.prepareContext(channel, now));
    prepared.afterInsert = afterInsert;
    return this.messaging.accept(prepared);
  }
}
