// The bodies a notification is POSTed as. Pure.
//
// json:  kwave's own object, stable for programs:
//        {"kind": "kwave.dev/notification", "version": 1, "event": "halted", "plan", "revision",
//         "time", "severity", "summary", "detail": <the runner's event as `-o json` prints it>}
// slack: what a Slack incoming webhook (and Mattermost, Rocket.Chat, Google Chat bridges) takes:
//        {"text": <fallback line>, "blocks": [section (mrkdwn), context]}; `text` alone is what
//        notifications and clients without blocks show.
import type { Notification } from './notification.js';

const NOTIFICATION_KIND = 'kwave.dev/notification';

export interface JsonNotification {
  kind: typeof NOTIFICATION_KIND;
  version: 1;
  event: Notification['kind'];
  plan: string;
  revision: string;
  time: string;
  severity: Notification['severity'];
  summary: string;
  detail: Notification['event'];
}

export function jsonBody(n: Notification): JsonNotification {
  return {
    kind: NOTIFICATION_KIND,
    version: 1,
    event: n.kind,
    plan: n.plan,
    revision: n.revision,
    time: n.time,
    severity: n.severity,
    summary: n.summary,
    detail: n.event,
  };
}

/** Slack's mrkdwn treats &, < and > as markup (links, mentions); everything else passes as written. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const MARK = { info: ':large_green_circle:', warning: ':large_yellow_circle:', error: ':red_circle:' } as const;

/** A section's text may hold at most 3000 characters; longer summaries are cut with an ellipsis. */
const SECTION_LIMIT = 3000;

export interface SlackMessage {
  text: string;
  blocks: (
    | { type: 'section'; text: { type: 'mrkdwn'; text: string } }
    | { type: 'context'; elements: { type: 'mrkdwn'; text: string }[] }
  )[];
}

export function slackBody(n: Notification): SlackMessage {
  const title = `kwave ${n.plan}: ${n.kind}`;
  const body = `${MARK[n.severity]} *${escapeMrkdwn(title)}*\n${escapeMrkdwn(n.summary)}`;
  const section = body.length > SECTION_LIMIT ? body.slice(0, SECTION_LIMIT - 1) + '…' : body;
  return {
    text: `${title}: ${n.summary}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: section } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: escapeMrkdwn(`plan ${n.plan} · revision ${n.revision} · ${n.time}`) }],
      },
    ],
  };
}

/** The request body for a target's format. */
export function notificationBody(n: Notification, format: 'json' | 'slack'): string {
  return JSON.stringify(format === 'slack' ? slackBody(n) : jsonBody(n));
}
