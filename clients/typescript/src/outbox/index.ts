export { Outbox } from "./outbox.js";
export type { FlushReport, OutboxEntry, OutboxEvent, OutboxKind, OutboxOptions, ServerAnswer, SetAsideEntry } from "./outbox.js";
