/**
 * Examples of the most used operations, by `METHOD path` as the OpenAPI document names them: a request body and the
 * answer it gets, as a running Tern answered them. A test checks each against its operation's schemas.
 */
export interface OperationExample {
  request?: unknown;
  response?: { status: string; body: unknown };
}

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
      body: {
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
      },
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
      body: {
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
      },
    },
  },
  'GET /sms/v1/messages': {
    response: {
      status: '200',
      body: {
        items: [
          {
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
              value: 'DELIVERED',
              deliveryDate: '2026-12-07T18:56:09.039Z',
              lookup: {
                mccMnc: '20810',
                country: 'France',
                network: 'SFR',
              },
            },
            refClient: 'order-42',
          },
        ],
        page: 1,
        pageSize: 20,
      },
    },
  },
  'GET /sms/v1/messages/{id}': {
    response: {
      status: '200',
      body: {
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
          value: 'DELIVERED',
          deliveryDate: '2026-12-07T18:56:09.039Z',
          lookup: {
            mccMnc: '20810',
            country: 'France',
            network: 'SFR',
          },
        },
        refClient: 'order-42',
      },
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
      body: {
        messageId: '01a251dd-0004-7000-8000-000000000004',
        acceptedAt: '2026-12-07T18:56:09.607Z',
        sentDate: '2026-12-07T18:56:09.607Z',
        channel: {
          channelId: '01a251dd-0002-7000-8000-000000000002',
          name: 'Notifications',
          type: 'SMS',
          flow: 'TRANSACTIONAL',
        },
        type: 'SMS',
        direction: 'MT',
        recipient: {
          to: '33612345673',
        },
        body: {
          text: 'Spring sale: -20% today',
          encoding: 'GSM7',
          messagePartCount: 1,
          length: 23,
          stop: false,
        },
        href: 'https://tern.example.com/sms/v1/messages/01a251dd-0004-7000-8000-000000000004',
        campaignId: '01a251dd-0003-7000-8000-000000000003',
        from: 'ACME',
        price: {
          amount: 0.045,
          currency: 'EUR',
        },
        status: {
          value: 'ENROUTE',
          deliveryDate: '2026-12-07T18:56:09.607Z',
          lookup: {
            mccMnc: '20810',
            country: 'France',
            network: 'SFR',
          },
        },
      },
    },
  },
  'GET /commons/v1/lookup/{msisdn}': {
    response: {
      status: '200',
      body: {
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
      },
    },
  },
  'GET /lookup': {
    response: {
      status: '200',
      body: {
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
      },
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
