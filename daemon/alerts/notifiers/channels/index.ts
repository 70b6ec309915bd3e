import type { NotifierType } from '../../../../src/notifier-fields.ts';
import type { Channel } from '../channel.ts';
import { discord } from './discord.ts';
import { googleChat } from './google-chat.ts';
import { gotify } from './gotify.ts';
import { matrix } from './matrix.ts';
import { opsgenie } from './opsgenie.ts';
import { pagerduty } from './pagerduty.ts';
import { pushover } from './pushover.ts';
import { teams } from './teams.ts';
import { telegram } from './telegram.ts';

/** The channel types with a module of their own, by type. */
export const CHANNELS: Partial<Record<NotifierType, Channel>> = {
  DISCORD: discord,
  TELEGRAM: telegram,
  TEAMS: teams,
  PAGERDUTY: pagerduty,
  OPSGENIE: opsgenie,
  PUSHOVER: pushover,
  GOTIFY: gotify,
  MATRIX: matrix,
  GOOGLE_CHAT: googleChat,
};
