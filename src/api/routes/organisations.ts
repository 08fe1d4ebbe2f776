import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/container.ts';

export function organisationRoutes(_app: FastifyInstance, _services: Services): void {}
