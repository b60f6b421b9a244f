// The host-channel model: how fast host data enters and leaves the wafer's edge, and what each
// host transaction costs besides.
//
// Contract: plain numbers. A channel carries gbps_per_channel in each direction; a wavelet is
// 32 payload bits, so at the profile's clock a channel moves
//   wavelets_per_cycle = gbps * 1e9 / 32 / (clock_mhz * 1e6)
// (7 Gbps at 850 MHz: 0.257 wavelets per cycle). Fabric rows with memcpy traffic are dealt to
// the channels round robin (the i-th such row from the north uses channel i % channels), and a
// channel serves its rows in turn. Every host call (memcpy, launch) is one transaction and
// costs transaction_overhead_us of host time, reported apart from the fabric cycles and never
// stalling the fabric. The figures are the SDK's (reference/wse-hardware.md §9, §12).
#pragma once

namespace wsemu::runtime::host {

struct HostChannelModel {
  int channels = 1;                        // the SDK's --channels (1..16)
  double gbps_per_channel = 7.0;
  double transaction_overhead_us = 200.0;  // per host call (the SDK's TCP overhead)

  double wavelets_per_cycle(double clock_mhz) const {
    return gbps_per_channel * 1e9 / 32.0 / (clock_mhz * 1e6);
  }
};

}  // namespace wsemu::runtime::host
