import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { underField } from '../../../core/errors.ts';
import type { Services } from '../../../core/services.ts';
import type { EffectiveWindow } from '../../../core/tenancy/sending-windows.ts';
import { HOLIDAY_CALENDARS } from '../../../domain/holidays.ts';
import { type DayHours as DayHoursValue, MAX_CONFIGURED_HOLIDAYS, MAX_RAMP_PER_SECOND, WEEKDAYS } from '../../../domain/sending-window.ts';
import { errorResponses, IdParams, Nullable } from '../schemas.ts';

const DayHours = Type.Object(
  {
    from: Type.String({ description: 'Local time HH:MM, included', examples: ['08:00'] }),
    to: Type.String({ description: 'Local time HH:MM, excluded (24:00: midnight)', examples: ['20:00'] }),
  },
  { additionalProperties: false },
);
const HoursInput = Type.Object(Object.fromEntries(WEEKDAYS.map((d) => [d, Type.Optional(Nullable(DayHours))])), {
  additionalProperties: false,
  description: 'The weekdays given replace those of the current window; null: no sending that day',
});
const HoursView = Type.Object(Object.fromEntries(WEEKDAYS.map((d) => [d, Type.Optional(DayHours)])), {
  additionalProperties: false,
  description: "Each weekday's allowed hours; a weekday absent: no sending that day",
});

const WindowInput = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Whether marketing traffic is held outside the window (true unless given)' })),
    hours: Type.Optional(HoursInput),
    holidayCalendar: Type.Optional(
      Type.String({ enum: [...HOLIDAY_CALENDARS], description: "Computed public holidays: FR (France's, movable ones included), or NONE" }),
    ),
    holidays: Type.Optional(
      Type.Array(Type.String(), { maxItems: MAX_CONFIGURED_HOLIDAYS, description: 'More days without sending, YYYY-MM-DD (another country’s holidays)' }),
    ),
    rampPerSecond: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_RAMP_PER_SECOND, description: 'Deferred messages leave at this many a second per channel' }),
    ),
    channelIds: Type.Optional(Type.Array(Type.String(), { maxItems: 1000, description: 'Channels held besides the MARKETING ones (not OTP channels)' })),
  },
  { additionalProperties: false, description: "The parts given replace those of the organisation's current window" },
);

const WindowView = Type.Object({
  organisationId: Type.String(),
  own: Type.Boolean({ description: "Set for this organisation; false: its country's default (France's for a French organisation, else off)" }),
  timeZone: Type.String({ description: "The organisation's time zone, in which the hours are read" }),
  enabled: Type.Boolean(),
  hours: HoursView,
  holidayCalendar: Type.String(),
  holidays: Type.Array(Type.String()),
  rampPerSecond: Type.Integer(),
  channelIds: Type.Array(Type.String()),
});

function view(organisationId: string, e: EffectiveWindow): Static<typeof WindowView> {
  const hours: Record<string, DayHoursValue> = {};
  for (const [day, h] of Object.entries(e.window.hours)) if (h !== null) hours[day] = h;
  return { organisationId, own: e.own, timeZone: e.timeZone, ...e.window, hours };
}

/** An organisation's marketing window (operator API): when its marketing messages may go. */
export function sendingWindowRoutes(app: FastifyInstance, services: Services): void {
  const tags = ['Admin'];
  const security = [{ apiKey: [] }];
  const path = '/admin/v1/organisations/:id/sending-window';
  const windows = services.messaging.windows;

  app.get(
    path,
    {
      schema: {
        tags,
        security,
        summary: "An organisation's marketing sending window (its own, or its country's default)",
        params: IdParams,
        response: { 200: WindowView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await services.tenancy.getOrganisation(id);
      return view(id, await windows.effective(id));
    },
  );

  app.put(
    path,
    {
      schema: {
        tags,
        security,
        summary: "Sets an organisation's marketing sending window; every node applies it at once",
        params: IdParams,
        body: WindowInput,
        response: { 200: WindowView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await services.tenancy.getOrganisation(id);
      const body = req.body as Static<typeof WindowInput>;
      return view(id, await underField('body.', () => windows.set(id, body as Parameters<typeof windows.set>[1])));
    },
  );

  app.delete(
    path,
    {
      schema: {
        tags,
        security,
        summary: "Drops an organisation's own window: its country's default applies again",
        params: IdParams,
        response: { 200: WindowView, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = req.params as { id: string };
      await services.tenancy.getOrganisation(id);
      return view(id, await windows.reset(id));
    },
  );
}
