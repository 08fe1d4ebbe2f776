/**
 * Examples of the most used operations, by `METHOD path` as the OpenAPI document names them: a request body and the
 * answer it gets, as a running Tern answered them (its ids those of openapi-samples.ts, which makes the examples of the
 * other operations). A test checks each against its operation's schemas.
 */
export interface OperationExample {
  request?: unknown;
  response?: { status: string; body: unknown };
}

/** An SMS as its send answered it, then as reading it after its delivery answers it. */
const SMS_SENT = {
  messageId: '01a251dd-0001-7000-8000-000000000001',
  acceptedAt: '2026-12-07T18:56:09.018Z',
  sentDate: '2026-12-07T18:56:09.018Z',
  channel: {
    channelId: '01a251dd-0002-7000-8000-000000000002',
    name: 'Notifications',
    type: 'SMS',
    flow: 'TRANSACTIONAL',
  },
  type: 'SMS',
  direction: 'MT',
  recipient: {
    to: '33612345678',
  },
  body: {
    text: 'Your code is 123456',
    encoding: 'GSM7',
    messagePartCount: 1,
    length: 19,
    stop: false,
  },
  href: 'https://tern.example.com/sms/v1/messages/01a251dd-0001-7000-8000-000000000001',
  from: 'ACME',
  price: {
    amount: 0.045,
    currency: 'EUR',
  },
  status: {
    value: 'ENROUTE',
    deliveryDate: '2026-12-07T18:56:09.018Z',
    lookup: {
      mccMnc: '20810',
      country: 'France',
      network: 'SFR',
    },
  },
  refClient: 'order-42',
};
const SMS_DELIVERED = {
  ...SMS_SENT,
  status: { ...SMS_SENT.status, value: 'DELIVERED', deliveryDate: '2026-12-07T18:56:09.039Z' },
};

/** An SMS of a campaign as adding it to the campaign answered it: the same SMS's fields, another number and text. */
const { refClient: _noReference, ...SMS_WITHOUT_REFERENCE } = SMS_SENT;
const CAMPAIGN_SMS_SENT = {
  ...SMS_WITHOUT_REFERENCE,
  messageId: '01a251dd-0004-7000-8000-000000000004',
  acceptedAt: '2026-12-07T18:56:09.607Z',
  sentDate: '2026-12-07T18:56:09.607Z',
  recipient: { to: '33612345673' },
  body: { ...SMS_SENT.body, text: 'Spring sale: -20% today', length: 23 },
  href: 'https://tern.example.com/sms/v1/messages/01a251dd-0004-7000-8000-000000000004',
  campaignId: '01a251dd-0003-7000-8000-000000000003',
  status: { ...SMS_SENT.status, deliveryDate: '2026-12-07T18:56:09.607Z' },
};

/** A mobile number as a lookup answers it, through the REST API or the legacy one. */
const LOOKUP = {
  msisdn: '33612345678',
  valid: true,
  possible: true,
  type: 'MOBILE',
  country: 'France',
  isoCountryCode: 'FR',
  countryPrefix: '33',
  formats: {
    e164: '+33612345678',
    international: '+33 6 12 34 56 78',
    national: '06 12 34 56 78',
  },
  network: 'SFR',
  mcc: '208',
  mnc: '10',
  mccMnc: '20810',
  reachable: true,
  ported: false,
  roaming: false,
  currentNetwork: {
    mccMnc: '20810',
    name: 'SFR',
  },
  originalNetwork: {
    mccMnc: '20810',
    name: 'SFR',
  },
};

export const EXAMPLES: Record<string, OperationExample> = {
  'POST /sms/v1/messages': {
    request: {
      recipient: {
        to: '33612345678',
      },
      body: {
        text: 'Your code is 123456',
      },
      from: 'ACME',
      refClient: 'order-42',
    },
    response: {
      status: '201',
      body: SMS_SENT,
    },
  },
  'POST /sms/v1/channels/{channelId}/messages': {
    request: {
      recipient: {
        to: '33612345678',
      },
      body: {
        text: 'Your code is 123456',
      },
      refClient: 'order-42',
    },
    response: {
      status: '201',
      body: SMS_SENT,
    },
  },
  'GET /sms/v1/messages': {
    response: {
      status: '200',
      body: {
        items: [SMS_DELIVERED],
        page: 1,
        pageSize: 20,
      },
    },
  },
  'GET /sms/v1/messages/{id}': {
    response: {
      status: '200',
      body: SMS_DELIVERED,
    },
  },
  'POST /sms/v1/campaigns': {
    request: {
      recipients: [
        {
          to: '33612345671',
        },
        {
          to: '33612345672',
        },
      ],
      body: {
        text: 'Spring sale: -20% today',
      },
      refClient: 'spring',
    },
    response: {
      status: '201',
      body: {
        campaignId: '01a251dd-0003-7000-8000-000000000003',
        channel: {
          channelId: '01a251dd-0002-7000-8000-000000000002',
          name: 'Notifications',
          type: 'SMS',
          flow: 'TRANSACTIONAL',
        },
        status: 'SENT',
        sentDate: '2026-12-07T18:56:09.571Z',
        creationDate: '2026-12-07T18:56:09.571Z',
        body: {
          text: 'Spring sale: -20% today',
        },
        recipients: 2,
        counts: {
          accepted: 2,
          rejected: 0,
          byStatus: {
            ENROUTE: 2,
          },
          links: 0,
          clickedLinks: 0,
          clicks: 0,
        },
        href: 'https://tern.example.com/sms/v1/campaigns/01a251dd-0003-7000-8000-000000000003',
        refClient: 'spring',
        errors: [],
      },
    },
  },
  'GET /sms/v1/campaigns/{campaignId}': {
    response: {
      status: '200',
      body: {
        campaignId: '01a251dd-0003-7000-8000-000000000003',
        channel: {
          channelId: '01a251dd-0002-7000-8000-000000000002',
          name: 'Notifications',
          type: 'SMS',
          flow: 'TRANSACTIONAL',
        },
        status: 'SENT',
        sentDate: '2026-12-07T18:56:09.571Z',
        creationDate: '2026-12-07T18:56:09.571Z',
        body: {
          text: 'Spring sale: -20% today',
        },
        recipients: 2,
        counts: {
          accepted: 2,
          rejected: 0,
          byStatus: {
            DELIVERED: 2,
          },
          links: 0,
          clickedLinks: 0,
          clicks: 0,
        },
        href: 'https://tern.example.com/sms/v1/campaigns/01a251dd-0003-7000-8000-000000000003',
        refClient: 'spring',
      },
    },
  },
  'POST /sms/v1/campaigns/{campaignId}/messages': {
    request: {
      recipient: {
        to: '33612345673',
      },
      body: {
        text: 'Spring sale: -20% today',
      },
    },
    response: {
      status: '201',
      body: CAMPAIGN_SMS_SENT,
    },
  },
  'GET /commons/v1/lookup/{msisdn}': {
    response: {
      status: '200',
      body: LOOKUP,
    },
  },
  'GET /lookup': {
    response: {
      status: '200',
      body: LOOKUP,
    },
  },
  'GET /commons/v1/organisations/{id}': {
    response: {
      status: '200',
      body: {
        organisationId: '01a251dd-0005-7000-8000-000000000005',
        name: 'Acme',
        balance: {
          amount: 9.815,
          currency: 'EUR',
          parentBilling: false,
        },
        monthlyConsumption: 0.185,
        state: 'ACTIVE',
        timeZone: 'Europe/Paris',
        optOut: {
          shortCode: '36111',
          text: 'STOP au 36111',
          custom: false,
        },
        creationDate: '2026-12-07T18:56:08.327Z',
        href: 'https://tern.example.com/commons/v1/organisations/01a251dd-0005-7000-8000-000000000005',
      },
    },
  },
  'GET /commons/v1/consumptions': {
    response: {
      status: '200',
      body: {
        items: [
          {
            consumptionId: '01a251dd-0006-7000-8000-000000000006',
            type: 'SMS',
            periodType: 'MONTH',
            startDate: '2026-12-01',
            endDate: '2026-12-31',
            quantity: 4,
            clicks: 0,
            price: {
              amount: 0.18,
              currency: 'EUR',
            },
            channel: {
              channelId: '01a251dd-0002-7000-8000-000000000002',
              name: 'Notifications',
              type: 'SMS',
              flow: 'TRANSACTIONAL',
            },
            items: [
              {
                quantity: 4,
                price: {
                  amount: 0.18,
                  currency: 'EUR',
                },
                lookup: {
                  mccMnc: '20810',
                  country: 'France',
                  network: 'SFR',
                },
                statuses: [
                  {
                    value: 'DELIVERED',
                    quantity: 4,
                  },
                ],
              },
            ],
            priceKinds: [
              {
                kind: 'SMS',
                quantity: 4,
                messages: 4,
                price: {
                  amount: 0.18,
                  currency: 'EUR',
                },
              },
            ],
            href: 'https://tern.example.com/commons/v1/channels/01a251dd-0002-7000-8000-000000000002/consumptions/01a251dd-0006-7000-8000-000000000006',
          },
        ],
        page: 1,
        pageSize: 10,
      },
    },
  },
  'GET /commons/v1/channels': {
    response: {
      status: '200',
      body: {
        items: [
          {
            channelId: '01a251dd-0002-7000-8000-000000000002',
            name: 'Notifications',
            type: 'SMS',
            flow: 'TRANSACTIONAL',
            organisationId: '01a251dd-0005-7000-8000-000000000005',
            fromFieldList: [],
            dailyConsumption: 0.185,
            monthlyConsumption: 0.185,
            shortLinks: false,
            state: 'ACTIVE',
            creationDate: '2026-12-07T18:56:08.500Z',
            href: 'https://tern.example.com/commons/v1/channels/01a251dd-0002-7000-8000-000000000002',
            defaultFromField: 'ACME',
          },
        ],
      },
    },
  },
};

const SMS_ID = '01a251dd-0001-7000-8000-000000000001';

/**
 * The text answers of the legacy operations (by their `….do` name) as Tern writes them, and an event of the live
 * stream (`events`).
 */
export const LEGACY_ANSWERS: Record<string, string> = {
  'sendSMS.do': `0 | Accepted | ${SMS_ID}`,
  'sendSMSBatch.do': '0 | Accepted | 01a251dd-0003-7000-8000-000000000003',
  'sendVoiceMessage.do': `0 | Accepted | ${SMS_ID}`,
  'smsStatus.do': '11 | Received',
  'compteRendu.do': '33612345678 11 | 33612345679 13',
  'deleteSMS.do': `0 | Deleted | ${SMS_ID}`,
  'credit.do': '212.5',
  'creditTransfert.do': '0 | Transfer done | 01a251dd-000e-7000-8000-00000000000e',
  'smsList.do': `${SMS_ID} | 07/12/2026 19:56 | Your code is 123456 | 33612345678 | 0.045 | 1`,
  'responseList.do': `01a251dd-001b-7000-8000-00000000001b | 07122026-19:58 | 33612345678 | OK, thanks | 36111 | ${SMS_ID}`,
  'addContact.do': '0 | Contact created | 01a251dd-001c-7000-8000-00000000001c',
  'createSubAccount.do': '0 | Sub-account created | 01a251dd-0017-7000-8000-000000000017',
  'deleteSubAccount.do': '0 | Sub-account deleted | 01a251dd-0017-7000-8000-000000000017',
  events:
    'id: 4711\nevent: message\ndata: {"eventId":"4711","kind":"STATUS","status":"DELIVERED","date":"2026-12-07T18:56:09.039Z","message":{"messageId":"01a251dd-0001-7000-8000-000000000001"}}\n\n',
};

const HREF = 'https://tern.example.com';

/** The message object as each channel type answers it: the examples of every operation that answers messages. */
export const MESSAGE_EXAMPLES: Record<string, Record<string, unknown>> = {
  SMS: SMS_DELIVERED,
  RCS: {
    ...SMS_DELIVERED,
    messageId: '01a251dd-001d-7000-8000-00000000001d',
    channel: { channelId: '01a251dd-001e-7000-8000-00000000001e', name: 'Deliveries', type: 'RCS', flow: 'TRANSACTIONAL' },
    type: 'RCS',
    body: { type: 'TEXT', text: 'Your parcel arrives today between 2 pm and 4 pm', suggestions: [{ type: 'REPLY', text: 'Thanks', postbackData: 'thanks' }] },
    href: `${HREF}/rcs/v1/messages/01a251dd-001d-7000-8000-00000000001d`,
    price: { amount: 0.04, currency: 'EUR', kind: 'BASIC' },
    validity: { amount: 2, timeUnit: 'DAYS' },
  },
  VOICE: {
    ...SMS_DELIVERED,
    messageId: '01a251dd-001f-7000-8000-00000000001f',
    channel: { channelId: '01a251dd-0020-7000-8000-000000000020', name: 'Voice codes', type: 'VOICE', flow: 'OTP' },
    type: 'VOICE',
    body: { text: 'Your code is 1 2 3 4 5 6', title: 'Hello, here is a voice message.', language: 'en-GB' },
    href: `${HREF}/voice/v1/messages/01a251dd-001f-7000-8000-00000000001f`,
    price: { amount: 0.035, currency: 'EUR', kind: 'VOICE' },
    duration: 4.233,
  },
};

const OTP = {
  otpId: '01a251dd-0011-7000-8000-000000000011',
  recipient: { to: '33612345678' },
  channel: 'SMS',
  status: 'PENDING',
  createdAt: '2026-12-07T18:56:09.018Z',
  expiresAt: '2026-12-07T19:01:09.018Z',
  attempts: { max: 5, used: 0 },
  messageId: '01a251dd-0001-7000-8000-000000000001',
  href: `${HREF}/sms/v1/otp/01a251dd-0011-7000-8000-000000000011`,
  refClient: 'signup-42',
};

const DELIVERY_PAYLOAD = JSON.stringify({ ...SMS_DELIVERED, callbackUrlStatus: 'https://acme.example/hooks/tern' });

const DELIVERY = {
  deliveryId: 'msg_01a251dd00017000800000000000001',
  eventId: '01a251dd-0014-7000-8000-000000000014',
  messageId: '01a251dd-0001-7000-8000-000000000001',
  channelId: '01a251dd-0002-7000-8000-000000000002',
  kind: 'STATUS',
  method: 'POST',
  url: 'https://acme.example/hooks/tern',
  status: 'PENDING',
  attemptCount: 1,
  creationDate: '2026-12-07T18:56:09.051Z',
  payload: DELIVERY_PAYLOAD,
  nextAttemptDate: '2026-12-07T18:56:39.060Z',
  lastHttpStatus: 503,
  lastError: 'HTTP 503',
  attempts: [{ date: '2026-12-07T18:56:09.060Z', outcome: 'retry', httpStatus: 503, latencyMs: 41, error: 'HTTP 503' }],
};

const KEY = {
  credentialId: '01a251dd-0008-7000-8000-000000000008',
  name: 'Production server',
  keyPrefix: 'tern_RJd5cgu',
  roles: ['USER'],
  state: 'ACTIVE',
  channel: { channelId: '01a251dd-0002-7000-8000-000000000002', name: 'Notifications', type: 'SMS', flow: 'TRANSACTIONAL' },
  organisationId: '01a251dd-0005-7000-8000-000000000005',
  creationDate: '2026-12-07T18:56:09.018Z',
};

const TRANSFER = {
  transferId: '01a251dd-000e-7000-8000-00000000000e',
  type: 'DEBIT',
  amount: 50,
  currency: 'EUR',
  creationDate: '2026-12-07T18:56:09.018Z',
  reference: 'invoice-2026-12',
  description: 'December top-up of the shop',
  organisationSource: { organisationId: '01a251dd-0005-7000-8000-000000000005', name: 'Acme' },
  organisationDestination: { organisationId: '01a251dd-0017-7000-8000-000000000017', name: 'Acme Shop' },
  href: `${HREF}/commons/v1/organisations/01a251dd-0005-7000-8000-000000000005/transfers/01a251dd-000e-7000-8000-00000000000e`,
};

Object.assign(EXAMPLES, {
  'POST /sms/v1/otp': {
    request: { recipient: { to: '33612345678' }, codeLength: 6, ttlSeconds: 300, locale: 'en-GB', refClient: 'signup-42' },
    response: { status: '201', body: OTP },
  },
  'GET /sms/v1/otp/{id}': { response: { status: '200', body: { ...OTP, attempts: { max: 5, used: 1 } } } },
  'POST /sms/v1/otp/{id}/check': { request: { code: '482913' }, response: { status: '200', body: { status: 'APPROVED', attempts: { max: 5, used: 1 } } } },
  'GET /commons/v1/webhooks/deliveries': { response: { status: '200', body: { items: [DELIVERY], page: 1, pageSize: 10 } } },
  'GET /commons/v1/webhooks/deliveries/{id}': { response: { status: '200', body: DELIVERY } },
  'GET /commons/v1/channels/{id}/credentials': { response: { status: '200', body: { items: [KEY] } } },
  'POST /commons/v1/channels/{id}/credentials': {
    request: { name: 'Production server', roles: ['USER'] },
    response: { status: '201', body: { ...KEY, value: 'tern_RJd5cguL0grMv3Yn82Lbq9RvOe79sw0XPcjQbEhqNEE' } },
  },
  'POST /commons/v1/organisations/{id}/transfers': {
    request: {
      organisationSource: { organisationId: '01a251dd-0005-7000-8000-000000000005' },
      organisationDestination: { organisationId: '01a251dd-0017-7000-8000-000000000017' },
      amount: 50,
      reference: 'invoice-2026-12',
      description: 'December top-up of the shop',
    },
    response: { status: '201', body: TRANSFER },
  },
  'GET /commons/v1/organisations/{id}/transfers': { response: { status: '200', body: { items: [TRANSFER], page: 1, pageSize: 10 } } },
} satisfies Record<string, OperationExample>);

// POST /lookup takes one number or a batch, not both: the example is the one-number form (its 200 answer).
EXAMPLES['POST /lookup'] = { request: { msisdn: '33612345678' }, response: { status: '200', body: EXAMPLES['GET /lookup']!.response!.body } };
