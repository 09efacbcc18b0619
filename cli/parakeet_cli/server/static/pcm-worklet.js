// Runs on the audio thread: the microphone's samples (mono, at the AudioContext's rate, which
// the page sets to the rate it declares to the server) as PCM16 little-endian, posted to the page
// in blocks of 100 ms.

const BLOCK_SECONDS = 0.1;

class Pcm16Block extends AudioWorkletProcessor {
  constructor() {
    super();
    this.size = Math.round(sampleRate * BLOCK_SECONDS);
    this.block = new Int16Array(this.size);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0][0];
    if (!channel) return true; // no input connected yet
    for (let i = 0; i < channel.length; i++) {
      const s = Math.max(-1, Math.min(1, channel[i]));
      this.block[this.filled++] = s < 0 ? s * 0x8000 : s * 0x7fff;
      if (this.filled === this.size) {
        this.port.postMessage(this.block.buffer, [this.block.buffer]); // (which empties this.block)
        this.block = new Int16Array(this.size);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor("pcm16-block", Pcm16Block);
