import type { ServiceSchema } from 'moleculer';
import { cardsService } from './cards.service';

/** Prepaid cards (issue 27): batches, sheets, redemption. Runs in the billing unit. */
export const cardsSchemas: ServiceSchema[] = [cardsService];
