import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/container.ts';

export function legacyRoutes(_app: FastifyInstance, _services: Services): void {}
