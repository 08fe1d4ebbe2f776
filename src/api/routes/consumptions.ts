import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/container.ts';

export function consumptionRoutes(_app: FastifyInstance, _services: Services): void {}
