"""The SdkLayout API (runtime/python/wsemu/sdk_layout.py) with programs of our own
(tests/python/kernels/sdk_layout): a sender and a receiver joined by painted routes, then by
ports and `connect` across the fabric; read_symbol after stop(); host streams through the top,
left and bottom fabric edges (out = a + b, 16-bit). The references are worked out here (the
sender's base + i * i, numpy's a + b); bad layouts are usage errors."""

import os

import numpy as np
import pytest

from conftest import SOURCE_DIR

KERNELS = os.path.join(SOURCE_DIR, "tests/python/kernels/sdk_layout")


def setup(arch):
    from cerebras.sdk.runtime.sdkruntimepybind import SdkLayout, SdkTarget, SimfabConfig, get_platform

    platform = get_platform(None, SimfabConfig(dump_core=True), SdkTarget.WSE3 if arch == "wse3" else SdkTarget.WSE2)
    return platform, SdkLayout(platform)


def run(platform, artifacts):
    from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime

    runtime = SdkRuntime(artifacts, platform, memcpy_required=False)
    runtime.load()
    runtime.run()
    runtime.stop()
    return runtime


def want(base):
    return np.array([base + i * i for i in range(4)], np.uint16)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_painted_routes_between_neighbours(tmp_path, arch):
    from cerebras.geometry.geometry import IntVector
    from cerebras.sdk.runtime.sdkruntimepybind import Color, Route, RoutingPosition

    platform, layout = setup(arch)
    tx = layout.create_code_region(os.path.join(KERNELS, "sender.csl"), "tx", 1, 1)
    rx = layout.create_code_region(os.path.join(KERNELS, "receiver.csl"), "rx", 1, 1)
    tx.place(0, 0)
    rx.place(1, 0)
    c = Color("c")
    tx.set_param_all("base", 7)
    tx.set_param_all(c)
    rx.set_param_all(c)
    rx.set_param(IntVector(0, 0), "extra", 99)
    tx.paint(IntVector(0, 0), c, [RoutingPosition().set_input([Route.RAMP]).set_output([Route.EAST])])
    rx.paint(IntVector(0, 0), c, [RoutingPosition().set_input([Route.WEST]).set_output([Route.RAMP])])
    runtime = run(platform, layout.compile(out_prefix=str(tmp_path / "out")))
    np.testing.assert_array_equal(runtime.read_symbol(1, 0, "got", dtype="uint16"), want(7))
    assert list(runtime.read_symbol(1, 0, "mark", dtype="uint16")) == [99]


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_ports_connected_across_the_fabric(tmp_path, arch):
    from cerebras.sdk.runtime.sdkruntimepybind import Color, Edge, Route, RoutingPosition

    platform, layout = setup(arch)
    tx = layout.create_code_region(os.path.join(KERNELS, "sender.csl"), "tx", 1, 1)
    out_color = tx.color("c")
    tx.set_param_all("base", 300)
    tx.set_param_all(out_color)
    out_port = tx.create_output_port(out_color, Edge.RIGHT, [RoutingPosition().set_input([Route.RAMP])], 4)
    tx.place(1, 3)
    rx = layout.create_code_region(os.path.join(KERNELS, "receiver.csl"), "rx", 1, 1)
    in_color = Color("c")  # another name for the same wire: connect gives both ends one color
    rx.set_param_all(in_color)
    rx.set_param_all("extra", 5)
    in_port = rx.create_input_port(in_color, Edge.BOTTOM, [RoutingPosition().set_output([Route.RAMP])], 4)
    rx.place(5, 0)
    layout.connect(out_port, in_port)
    artifacts = layout.compile(out_prefix=str(tmp_path / "out"))
    text = open(os.path.join(artifacts, "sdklayout.csl"), encoding="utf-8").read()
    # out of (1, 3) east, along row 3 to x = 5, north to (5, 1), into (5, 0) from the south
    assert "@set_color_config(5, 1, @get_color(0), .{ .routes = .{ .rx = .{ SOUTH }, .tx = .{ NORTH } } })" in text
    runtime = run(platform, artifacts)
    np.testing.assert_array_equal(runtime.read_symbol(5, 0, "got", dtype="uint16"), want(300))


def test_bad_layouts_are_usage_errors(tmp_path):
    from wsemu.errors import UsageError

    platform, layout = setup("wse2")
    a = layout.create_code_region(os.path.join(KERNELS, "sender.csl"), "a", 2, 2)
    b = layout.create_code_region(os.path.join(KERNELS, "sender.csl"), "b", 1, 1)
    a.place(0, 0)
    b.place(1, 1)
    with pytest.raises(UsageError, match="regions 'a' and 'b' overlap at PE \\(1, 1\\)"):
        layout.compile(out_prefix=str(tmp_path / "out"))
    with pytest.raises(UsageError, match="outside region 'b'"):
        b.set_param((1, 0), "base", 1)
    with pytest.raises(UsageError, match="create_input_stream: needs an input port"):
        layout.create_input_stream(None)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_host_streams_through_three_edges(tmp_path, rng, arch):
    from cerebras.sdk.runtime.sdkruntimepybind import Color, Edge, Route, RoutingPosition, SdkRuntime

    n = 12
    platform, layout = setup(arch)
    region = layout.create_code_region(os.path.join(KERNELS, "sum2.csl"), "sum2", 1, 1)
    ca, cb, co = Color("ca"), Color("cb"), Color("co")
    region.set_param_all("n", n)
    for c in (ca, cb, co):
        region.set_param_all(c)
    to_ramp = [RoutingPosition().set_output([Route.RAMP])]
    a_port = region.create_input_port(ca, Edge.TOP, to_ramp, n)
    b_port = region.create_input_port(cb, Edge.LEFT, to_ramp, n)
    out_port = region.create_output_port(co, Edge.BOTTOM, [RoutingPosition().set_input([Route.RAMP])], n)
    region.place(2, 1)
    a_stream, b_stream = layout.create_input_stream(a_port), layout.create_input_stream(b_port)
    out_stream = layout.create_output_stream(out_port)
    runtime = SdkRuntime(layout.compile(out_prefix=str(tmp_path / "out")), platform, memcpy_required=False)
    runtime.load()
    runtime.run()
    a = rng.integers(0, 30000, n).astype(np.uint32)
    b = rng.integers(0, 30000, n).astype(np.uint16)
    got = np.zeros(n, np.uint32)
    runtime.send(a_stream, a, nonblock=True)
    runtime.send(b_stream, b, nonblock=True)
    runtime.receive(out_stream, got, n, nonblock=True)
    runtime.stop()  # the pending streams move here
    np.testing.assert_array_equal(got, (a + b) & 0xFFFF)
    with pytest.raises(Exception, match="stopped"):
        runtime.send(a_stream, a)


@pytest.mark.parametrize("arch", ["wse2", "wse3"])
def test_ports_of_three_pes_symbols_and_switch_positions(tmp_path, rng, arch):
    from cerebras.sdk.runtime.sdkruntimepybind import Color, Edge, Route, RoutingPosition, get_edge_routing

    platform, layout = setup(arch)
    src = layout.create_code_region(os.path.join(KERNELS, "column_send.csl"), "src", 1, 3)
    dst = layout.create_code_region(os.path.join(KERNELS, "column_recv.csl"), "dst", 1, 3)
    src.place(0, 0)
    dst.place(3, 0)
    a, b = Color("c"), Color("c")
    src.set_param_all(a)
    dst.set_param_all(b)
    values = rng.integers(0, 1 << 32, (3, 2), dtype=np.uint64).astype(np.uint32)  # row y: PE y's two words
    src.set_symbol_all("val", values, 2, 3)
    out_port = src.create_output_port(a, Edge.RIGHT, [RoutingPosition().set_input([Route.RAMP])], 6)
    in_port = dst.create_input_port(b, Edge.LEFT, [RoutingPosition().set_output([Route.RAMP])], 6)
    layout.connect(out_port, in_port)
    # an unused color painted with a switch position, the bottom edge without it
    d = Color("d")
    p0 = RoutingPosition().set_input([Route.WEST]).set_output([Route.RAMP])
    p1 = RoutingPosition().set_input([Route.NORTH]).set_output([Route.RAMP])
    dst.paint_all(d, [p0, p1], [get_edge_routing(Edge.BOTTOM, [p0])])
    artifacts = layout.compile(out_prefix=str(tmp_path / "out"))
    text = open(os.path.join(artifacts, "sdklayout.csl"), encoding="utf-8").read()
    colors = "@get_color(1), .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP } }"
    assert f"@set_color_config(3, 0, {colors}, .switches = .{{ .pos1 = .{{ .tx = .{{ RAMP }} }} }} }});" in text  # NORTH: off
    assert f"@set_color_config(3, 1, {colors}, .switches = .{{ .pos1 = .{{ .rx = .{{ NORTH }}, .tx = .{{ RAMP }} }} }} }});" in text
    assert f"@set_color_config(3, 2, {colors} }});" in text
    runtime = run(platform, artifacts)
    for y in range(3):
        np.testing.assert_array_equal(runtime.read_symbol(3, y, "got", dtype="uint32"), values[y])
