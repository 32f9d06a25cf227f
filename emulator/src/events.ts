import { EventEmitter } from 'node:events';
import type { EmuEvent } from './control/protocol.js';

/** Where the inventory and drives report what happened; the control server forwards it. */
export interface EventSink {
  emit(event: EmuEvent): void;
}

/** In-process fan-out of emulator events. A throwing listener never breaks the emitter. */
export class EventBus implements EventSink {
  private readonly emitter = new EventEmitter();

  emit(event: EmuEvent): void {
    for (const listener of this.emitter.listeners('event')) {
      try {
        (listener as (e: EmuEvent) => void)(event);
      } catch {
        // Listeners are observers (socket writers, loggers); the move already happened.
      }
    }
  }

  /** Subscribes; returns the unsubscribe function. */
  subscribe(listener: (e: EmuEvent) => void): () => void {
    this.emitter.setMaxListeners(0);
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }
}
