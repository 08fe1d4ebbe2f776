import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/container.ts';

export function simulatorRoutes(_app: FastifyInstance, _services: Services): void {}
