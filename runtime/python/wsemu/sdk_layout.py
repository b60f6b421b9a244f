"""The SDK's Python layout API (``SdkLayout``), written for wsemu from the way the SDK's
sdklayout tutorials call it: code regions of PEs running one CSL file, their params, colors,
symbols and painted routes, ports on a region's edge joined by ``connect``, host streams, and
``compile``, which writes a CSL layout file of these and compiles it with ``wsemu cslc``.

    platform = get_platform(cmaddr, SimfabConfig(), SdkTarget.WSE3)
    layout = SdkLayout(platform)
    code = layout.create_code_region("./pe.csl", "name", width, height)
    code.set_param_all("size", 10)              # every PE of the region; set_param(IntVector, ...) one
    c = code.color("c")                         # or Color("c"): a color by name
    code.set_param_all(c)                       # the param named after the color
    code.paint(IntVector(0, 0), c, [RoutingPosition().set_input([Route.RAMP]).set_output([Route.EAST])])
    port = code.create_output_port(c, Edge.RIGHT, [RoutingPosition().set_input([Route.RAMP])], size)
    code.place(x, y)                            # else regions go left to right, one PE apart
    layout.connect(out_port, in_port)
    artifacts = layout.compile(out_prefix="out")
    runtime = SdkRuntime(artifacts, platform, memcpy_required=False)

Colors are names until ``compile``: it gives each a color id (0, 1, ... in order of first use),
the two ends of a connection the same one. A port's PEs (one, or every PE of a region's edge)
take the port's positions, the side a position leaves out filled with the port's edge, in place
of what the region painted there; ``connect`` pairs the PEs of two ports of equal span in order
(top to bottom, left to right) and routes each pair over the fabric from the one edge to the
other, along x first and then y (or y first where that path would cross itself), through any PE
on the way (routers only). Several positions at a PE are the route and its switch positions
(``.switches`` ``pos1..pos3``, advanced by control wavelets); ``paint_all(color, positions,
[get_edge_routing(edge, positions)])`` gives one edge's PEs their own. Directions that lead off
the fabric are left out (no wavelet comes from there). A stream (``create_input_stream(port)``,
``create_output_stream(port)``, one-PE ports) runs straight from the fabric edge on its port's
side to the port; ``SdkRuntime.send(stream, array)`` and ``receive(stream, array, n)`` move its
32-bit wavelets (the host at that edge; control wavelets that reach it are dropped), all pending
ones together. ``set_symbol_all(name, values, width, height)`` splits a row-major height x width
array into the region's PEs' blocks, written before any task runs. Coordinates are the region's
own (``set_param``, ``paint``, ``IntRectangle`` ranges) or the fabric's (``place``,
``read_symbol``).
"""

import enum
import json
import os
import shutil
import subprocess

import numpy as np

from wsemu.errors import NoHardwareError, UsageError


class SdkTarget(enum.Enum):
    WSE2 = "wse2"
    WSE3 = "wse3"


class SimfabConfig:
    """The simulator's options, accepted and kept, not used: wsemu writes a core dump when asked
    (``SdkRuntime.dump_core``), and its thread count is SdkRuntime's ``threads`` (results are
    the same for any)."""

    def __init__(self, dump_core=False, num_threads=None, **others):
        self.dump_core = bool(dump_core)
        self.num_threads = num_threads
        self.others = others


class Platform:
    def __init__(self, config, target):
        self.config = config
        self.target = target

    @property
    def arch(self):
        return self.target.value


def get_platform(cmaddr, config, target):
    if cmaddr:
        raise NoHardwareError(f"get_platform: cmaddr={cmaddr!r} names a real CS system; wsemu runs the program on "
                              f"its virtual wafer (leave cmaddr out)")
    if not isinstance(target, SdkTarget):
        raise UsageError(f"get_platform: the target must be SdkTarget.WSE2 or SdkTarget.WSE3, not {target!r}")
    return Platform(config if config is not None else SimfabConfig(), target)


class Route(enum.Enum):
    RAMP = "RAMP"
    EAST = "EAST"
    WEST = "WEST"
    NORTH = "NORTH"
    SOUTH = "SOUTH"


class Edge(enum.Enum):
    LEFT = "LEFT"
    RIGHT = "RIGHT"
    TOP = "TOP"
    BOTTOM = "BOTTOM"


_STEP = {Route.EAST: (1, 0), Route.WEST: (-1, 0), Route.NORTH: (0, -1), Route.SOUTH: (0, 1)}
_OPPOSITE = {Route.EAST: Route.WEST, Route.WEST: Route.EAST, Route.NORTH: Route.SOUTH, Route.SOUTH: Route.NORTH}
_EDGE_SIDE = {Edge.LEFT: Route.WEST, Edge.RIGHT: Route.EAST, Edge.TOP: Route.NORTH, Edge.BOTTOM: Route.SOUTH}


class RoutingPosition:
    """One route of a color at a PE: where wavelets come from (input) and go to (output)."""

    def __init__(self):
        self.inputs = []
        self.outputs = []

    def set_input(self, routes):
        self.inputs = _routes(routes, "set_input")
        return self

    def set_output(self, routes):
        self.outputs = _routes(routes, "set_output")
        return self


def _routes(routes, call):
    routes = list(routes)
    for r in routes:
        if not isinstance(r, Route):
            raise UsageError(f"RoutingPosition.{call}: {r!r} is not a Route (RAMP, EAST, WEST, NORTH, SOUTH)")
    return routes


class Color:
    """A color by name; ``SdkLayout.compile`` gives it its id."""

    def __init__(self, name):
        if not isinstance(name, str) or not name.isidentifier():
            raise UsageError(f"Color: the name must be an identifier (it names the param it sets), not {name!r}")
        self.name = name

    def __repr__(self):
        return f"Color({self.name!r})"


class IntVector:
    def __init__(self, x, y):
        self.x = int(x)
        self.y = int(y)

    def __iter__(self):
        return iter((self.x, self.y))

    def __repr__(self):
        return f"IntVector({self.x}, {self.y})"


class IntRectangle:
    """PEs [ul.x, lr.x) x [ul.y, lr.y) of a region (lr exclusive)."""

    def __init__(self, ul, lr):
        self.ul = IntVector(*ul)
        self.lr = IntVector(*lr)

    def cells(self):
        return [(x, y) for y in range(self.ul.y, self.lr.y) for x in range(self.ul.x, self.lr.x)]

    def __repr__(self):
        return f"IntRectangle({self.ul!r}, {self.lr!r})"


class EdgeRouting:
    """``get_edge_routing(edge, positions)``: the positions a ``paint_all`` gives the PEs on one
    edge of the region instead of its own."""

    def __init__(self, edge, positions):
        if not isinstance(edge, Edge):
            raise UsageError(f"get_edge_routing: {edge!r} is not an Edge")
        self.edge = edge
        self.positions = list(positions)


def get_edge_routing(edge, positions):
    return EdgeRouting(edge, positions)


class Port:
    def __init__(self, region, color, edge, routes, size, is_input):
        self.region = region
        self.color = color
        self.edge = edge
        self.routes = routes
        self.size = size
        self.is_input = is_input
        self.connected = False


class Stream:
    """A host stream into (``create_input_stream``) or out of (``create_output_stream``) a port,
    through the fabric edge on the port's side: ``SdkRuntime.send`` / ``receive``."""

    def __init__(self, index, port, into_wafer):
        self.index = index
        self.port = port
        self.into_wafer = into_wafer


class CodeRegion:
    def __init__(self, layout, path, name, width, height):
        self.layout = layout
        self.path = path
        self.name = name
        self.width = width
        self.height = height
        self.origin = None           # its place on the fabric
        self.params = {}             # (x, y) -> {name: value}
        self.paints = []             # ((x, y), color, [RoutingPosition, switch positions...])
        self.symbols = []            # ((x, y), name, values)

    def _coords(self, call, where):
        x, y = (where.x, where.y) if isinstance(where, IntVector) else tuple(int(v) for v in where)
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise UsageError(f"{call}: ({x}, {y}) is outside region '{self.name}' ({self.width} x {self.height})")
        return x, y

    def _all(self):
        return [(x, y) for y in range(self.height) for x in range(self.width)]

    def color(self, name):
        return Color(name)

    def set_param(self, where, name_or_color, value=None):
        self._set([self._coords("set_param", where)], "set_param", name_or_color, value)

    def set_param_all(self, name_or_color, value=None):
        self._set(self._all(), "set_param_all", name_or_color, value)

    def _set(self, pes, call, name_or_color, value):
        if isinstance(name_or_color, Color):
            name, value = name_or_color.name, name_or_color
        elif isinstance(name_or_color, str) and value is not None:
            name = name_or_color
        else:
            raise UsageError(f"{call}: give a param name and its value, or a Color (the param of its name)")
        for pe in pes:
            self.params.setdefault(pe, {})[name] = value

    def paint(self, where, color, positions):
        self._paint(self._coords("paint", where), color, positions, "paint")

    def paint_all(self, color, positions, edge_routings=()):
        # A PE on an edge with its own routing takes that instead (a corner: the first listed).
        for pe in self._all():
            chosen = positions
            for er in edge_routings:
                if self._on_edge(pe, er.edge):
                    chosen = er.positions
                    break
            self._paint(pe, color, chosen, "paint_all")

    def paint_range(self, rect, color, positions):
        for pe in rect.cells():
            self._paint(self._coords("paint_range", pe), color, positions, "paint_range")

    def set_param_range(self, rect, name_or_color, value=None):
        self._set([self._coords("set_param_range", pe) for pe in rect.cells()], "set_param_range", name_or_color, value)

    def set_symbol_all(self, name, values, width, height):
        """``values``: a row-major ``height`` x ``width`` array over the whole region; each PE
        holds its block (height / region height rows of width / region width), row-major."""
        a = np.asarray(values).reshape(int(height), int(width))
        if height % self.height or width % self.width:
            raise UsageError(f"set_symbol_all: a {height} x {width} array does not split over region '{self.name}' "
                             f"({self.width} x {self.height} PEs)")
        bh, bw = height // self.height, width // self.width
        for (x, y) in self._all():
            self.symbols.append(((x, y), name, a[y * bh:(y + 1) * bh, x * bw:(x + 1) * bw].reshape(-1)))

    def _on_edge(self, pe, edge):
        x, y = pe
        return {Edge.LEFT: x == 0, Edge.RIGHT: x == self.width - 1, Edge.TOP: y == 0,
                Edge.BOTTOM: y == self.height - 1}[edge]

    def _paint(self, pe, color, positions, call):
        positions = list(positions)
        if not isinstance(color, Color):
            raise UsageError(f"{call}: {color!r} is not a Color")
        if not 1 <= len(positions) <= 4:
            raise UsageError(f"{call}: {len(positions)} routing positions at a PE (1 to 4: the route and 3 switch "
                             f"positions)")
        self.paints = [p for p in self.paints if not (p[0] == pe and p[1] is color)]  # the last paint wins
        self.paints.append((pe, color, positions))

    def create_input_port(self, color, edge, positions, size, *rest):
        return self._port(color, edge, positions, size, True)

    def create_output_port(self, color, edge, positions, size, *rest):
        return self._port(color, edge, positions, size, False)

    def _port(self, color, edge, positions, size, is_input):
        call = "create_input_port" if is_input else "create_output_port"
        if not isinstance(color, Color) or not isinstance(edge, Edge):
            raise UsageError(f"{call}: needs a Color and an Edge")
        positions = list(positions)
        if not 1 <= len(positions) <= 4:
            raise UsageError(f"{call}: 1 to 4 routing positions (the route and 3 switch positions)")
        return Port(self, color, edge, positions, int(size), is_input)

    def place(self, x, y):
        self.origin = (int(x), int(y))

    def _port_pes(self, port):
        """The fabric PEs of a port, along its edge (top to bottom, left to right)."""
        ox, oy = self.origin
        if port.edge == Edge.RIGHT:
            return [(ox + self.width - 1, oy + y) for y in range(self.height)]
        if port.edge == Edge.LEFT:
            return [(ox, oy + y) for y in range(self.height)]
        if port.edge == Edge.TOP:
            return [(ox + x, oy) for x in range(self.width)]
        return [(ox + x, oy + self.height - 1) for x in range(self.width)]

    def _port_pe(self, port):
        pes = self._port_pes(port)
        if len(pes) != 1:
            raise NotImplementedError(f"a stream through a port of {len(pes)} PEs (region '{self.name}') is not written "
                                      f"in wsemu's SdkLayout yet (the SDK's streams use one-PE ports too)")
        return pes[0]


class SdkLayout:
    def __init__(self, platform):
        if not isinstance(platform, Platform):
            raise UsageError("SdkLayout: needs the platform of get_platform()")
        self.platform = platform
        self.regions = []
        self.connections = []
        self.streams = []

    def create_code_region(self, path, name, width, height):
        if any(r.name == name for r in self.regions):
            raise UsageError(f"create_code_region: a region named '{name}' exists")
        if int(width) < 1 or int(height) < 1:
            raise UsageError(f"create_code_region: region '{name}' must be at least 1 x 1, not {width} x {height}")
        region = CodeRegion(self, os.path.abspath(path), name, int(width), int(height))
        self.regions.append(region)
        return region

    def connect(self, out_port, in_port):
        if not isinstance(out_port, Port) or not isinstance(in_port, Port) or out_port.is_input or not in_port.is_input:
            raise UsageError("connect: needs an output port and then an input port")
        self.connections.append((out_port, in_port))

    def create_input_stream(self, port, *rest):
        return self._stream(port, True, "create_input_stream")

    def create_output_stream(self, port, *rest):
        return self._stream(port, False, "create_output_stream")

    def _stream(self, port, into_wafer, call):
        if not isinstance(port, Port) or port.is_input != into_wafer:
            raise UsageError(f"{call}: needs an {'input' if into_wafer else 'output'} port")
        stream = Stream(len(self.streams), port, into_wafer)
        self.streams.append(stream)
        return stream

    def compile(self, out_prefix="out"):
        self._place()
        ids = self._color_ids()
        routes = {}  # (x, y, color id) -> [(rx, tx), switch positions...]
        fixed = {}   # the keys set by a port or a path, and what set them

        def add(x, y, cid, positions, what, override=False):
            key = (x, y, cid)
            if key in fixed and fixed[key][1] != positions:
                raise UsageError(f"compile: color {cid} gets two routes at PE ({x}, {y}) ({fixed[key][0]}; {what})")
            if override:
                fixed[key] = (what, positions)
            routes[key] = positions

        for region in self.regions:
            ox, oy = region.origin
            for (x, y), color, positions in region.paints:
                add(ox + x, oy + y, ids[id(color)], [(p.inputs, p.outputs) for p in positions],
                    f"painted in region '{region.name}'")
        # A port's PEs take the port's positions (its edge filling the side a position leaves out),
        # in place of what the region painted there; a connection routes the PEs between.
        used_ports = [p for c in self.connections for p in c] + [st.port for st in self.streams]
        for port in {id(p): p for p in used_ports}.values():
            side = _EDGE_SIDE[port.edge]
            positions = [((p.inputs or [side]) if port.is_input else (p.inputs or [Route.RAMP]),
                          (p.outputs or [Route.RAMP]) if port.is_input else (p.outputs or [side])) for p in port.routes]
            for x, y in port.region._port_pes(port):
                add(x, y, ids[id(port.color)], positions, f"the port of '{port.region.name}'", override=True)
        for out_port, in_port in self.connections:
            cid = ids[id(out_port.color)]
            outs, ins = out_port.region._port_pes(out_port), in_port.region._port_pes(in_port)
            if len(outs) != len(ins):
                raise UsageError(f"connect: the port of '{out_port.region.name}' spans {len(outs)} PEs, the port of "
                                 f"'{in_port.region.name}' {len(ins)}")
            for s_pe, d_pe in zip(outs, ins):
                for (x, y), rx, tx in self._path(out_port, in_port, s_pe, d_pe):
                    add(x, y, cid, [(rx, tx)], f"the connection from '{out_port.region.name}' to "
                                               f"'{in_port.region.name}'", override=True)
        width = max([r.origin[0] + r.width for r in self.regions] + [x + 1 for x, _, _ in routes])
        height = max([r.origin[1] + r.height for r in self.regions] + [y + 1 for _, y, _ in routes])
        # A stream reaches the fabric edge on its port's side, one PE beyond the port at least.
        for st in self.streams:
            px, py = st.port.region._port_pe(st.port)
            if st.port.edge == Edge.RIGHT:
                width = max(width, px + 2)
            if st.port.edge == Edge.BOTTOM:
                height = max(height, py + 2)
        host_edge = set()
        streams = []
        for st in self.streams:
            cid = ids[id(st.port.color)]
            cells, side = self._stream_path(st.port, width, height)  # edge first, the port's PE last
            for i, cell in enumerate(cells[:-1]):
                toward_port = _direction(cell, cells[i + 1])
                outer = side if i == 0 else _direction(cell, cells[i - 1])
                rx, tx = ([outer], [toward_port]) if st.into_wafer else ([toward_port], [outer])
                add(cell[0], cell[1], cid, [(rx, tx)], f"stream {st.index}", override=True)
            edge = cells[0]
            host_edge.add((edge[0], edge[1], cid))
            streams.append({"index": st.index, "x": edge[0], "y": edge[1], "side": side.value[0], "color": cid,
                            "into_wafer": st.into_wafer})
        routes = _inside(routes, width, height, host_edge)
        out_dir = os.path.abspath(out_prefix)
        os.makedirs(out_dir, exist_ok=True)
        layout_path = os.path.join(out_dir, "sdklayout.csl")
        with open(layout_path, "w", encoding="utf-8") as f:
            f.write(self._layout_text(width, height, ids, routes, host_edge))
        with open(os.path.join(out_dir, "sdklayout_streams.json"), "w", encoding="utf-8") as f:
            json.dump(streams, f, indent=1)
        symbols = []
        for region in self.regions:
            ox, oy = region.origin
            for (x, y), name, values in region.symbols:
                symbols.append({"x": ox + x, "y": oy + y, "name": name, "words": [int(w) for w in _words(values)]})
        with open(os.path.join(out_dir, "sdklayout_symbols.json"), "w", encoding="utf-8") as f:
            json.dump(symbols, f)
        # The fabric is the layout's rectangle, so that streams meet the host at its edge.
        r = subprocess.run([_wsemu_binary(), "cslc", layout_path, f"--arch={self.platform.arch}",
                            f"--fabric-dims={width},{height}", "-o", out_dir],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise UsageError(f"SdkLayout.compile: wsemu cslc failed on {layout_path}:\n{r.stderr.strip()}")
        return out_dir

    def _place(self):
        # Explicit places first; the others left to right after them, one PE apart, at row 0.
        x = max([r.origin[0] + r.width + 1 for r in self.regions if r.origin is not None] + [0])
        for r in self.regions:
            if r.origin is None:
                r.origin = (x, 0)
                x += r.width + 1
        taken = {}
        for r in self.regions:
            if r.origin[0] < 0 or r.origin[1] < 0:
                raise UsageError(f"compile: region '{r.name}' is placed at {r.origin}, off the fabric")
            for dx in range(r.width):
                for dy in range(r.height):
                    pe = (r.origin[0] + dx, r.origin[1] + dy)
                    if pe in taken:
                        raise UsageError(f"compile: regions '{taken[pe]}' and '{r.name}' overlap at PE {pe}")
                    taken[pe] = r.name

    def _color_ids(self):
        # One id per color, the two ends of a connection sharing theirs (union by connect).
        parent = {}

        def find(c):
            parent.setdefault(id(c), id(c))
            while parent[id(c)] != id(c):
                c = _colors[parent[id(c)]]
            return id(c)

        _colors = {}
        order = []
        for region in self.regions:
            for pe in sorted(region.params):
                for value in region.params[pe].values():
                    if isinstance(value, Color):
                        order.append(value)
            for _, color, _ in region.paints:
                order.append(color)
        for a, b in self.connections:
            order += [a.color, b.color]
        for c in order:
            _colors[id(c)] = c
        for a, b in self.connections:
            ra, rb = find(a.color), find(b.color)
            if ra != rb:
                parent[rb] = ra
        ids, next_id = {}, 0
        for c in order:
            root = find(c)
            if root not in ids:
                if next_id > 20:
                    raise UsageError("compile: more than 21 colors (0..20; wsemu's memcpy firmware reserves 21..23)")
                ids[root] = next_id
                next_id += 1
            ids[id(c)] = ids[root]
        return ids

    def _path(self, out_port, in_port, source, dest):
        """The route configs of the PEs between an output port's PE and an input port's: out of
        the one's edge, along x then y (or y then x), into the other through its edge."""
        (sx, sy), (dx, dy) = source, dest
        leave, enter = _EDGE_SIDE[out_port.edge], _EDGE_SIDE[in_port.edge]
        a = (sx + _STEP[leave][0], sy + _STEP[leave][1])
        b = (dx + _STEP[enter][0], dy + _STEP[enter][1])
        for x_first in (True, False):
            cells = [(sx, sy), a]
            cur = a
            for axis in ((0, 1) if x_first else (1, 0)):
                while cur[axis] != b[axis]:
                    step = 1 if b[axis] > cur[axis] else -1
                    cur = (cur[0] + step, cur[1]) if axis == 0 else (cur[0], cur[1] + step)
                    cells.append(cur)
            cells.append((dx, dy))
            if len(set(cells)) == len(cells) and min(min(c) for c in cells) >= 0:
                break
        else:
            raise UsageError(f"compile: no path from '{out_port.region.name}' ({out_port.edge.name} edge) to "
                             f"'{in_port.region.name}' ({in_port.edge.name} edge) that does not cross itself")
        return [(cell, [_direction(cell, cells[i])], [_direction(cell, cells[i + 2])])
                for i, cell in enumerate(cells[1:-1])]

    def _stream_path(self, port, width, height):
        """The PEs from the fabric edge on the port's side to the port's PE, and that side."""
        px, py = port.region._port_pe(port)
        side = _EDGE_SIDE[port.edge]
        if side == Route.EAST:
            cells = [(x, py) for x in range(width - 1, px - 1, -1)]
        elif side == Route.WEST:
            cells = [(x, py) for x in range(0, px + 1)]
        elif side == Route.NORTH:
            cells = [(px, y) for y in range(0, py + 1)]
        else:
            cells = [(px, y) for y in range(height - 1, py - 1, -1)]
        return cells, side

    def _layout_text(self, width, height, ids, routes, host_edge=()):
        lines = ["// Generated by wsemu's SdkLayout (runtime/python/wsemu/sdk_layout.py); do not edit.", "layout {",
                 f"  @set_rectangle({width}, {height});"]
        for region in self.regions:
            ox, oy = region.origin
            for x, y in region._all():
                params = region.params.get((x, y), {})
                fields = ", ".join(f".{k} = {_csl_value(v, ids)}" for k, v in params.items())
                lines.append(f'  @set_tile_code({ox + x}, {oy + y}, "{region.path}", .{{ {fields} }});')
        def side_text(name, dirs):
            return f".{name} = .{{ {', '.join(r.value for r in dirs)} }}" if dirs else ""

        for (x, y, cid), positions in sorted(routes.items()):
            rx, tx = positions[0]
            extra = ""
            if len(positions) > 1:
                pos = []
                for k, (prx, ptx) in enumerate(positions[1:]):
                    fields = ", ".join(t for t in (side_text("rx", prx), side_text("tx", ptx)) if t)
                    pos.append(f".pos{k + 1} = .{{ {fields} }}")
                extra = f", .switches = .{{ {', '.join(pos)} }}"
            if (x, y, cid) in host_edge:
                extra += ", .wsemu_host_edge = true"
            lines.append(f"  @set_color_config({x}, {y}, @get_color({cid}), "
                         f".{{ .routes = .{{ {side_text('rx', rx)}, {side_text('tx', tx)} }}{extra} }});")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _inside(routes, width, height, host_edge):
    """The routes with the directions that lead off the fabric left out (no wavelet comes from or
    goes to there), but for the host edge's; a route left without an input or an output goes,
    and a switch position left without one takes the previous position's (CSL's rule)."""
    def keep(x, y, dirs, host):
        out = []
        for d in dirs:
            if d == Route.RAMP or host:
                out.append(d)
                continue
            nx, ny = x + _STEP[d][0], y + _STEP[d][1]
            if 0 <= nx < width and 0 <= ny < height:
                out.append(d)
        return out

    kept = {}
    for (x, y, cid), positions in routes.items():
        host = (x, y, cid) in host_edge
        trimmed = [(keep(x, y, rx, host), keep(x, y, tx, host)) for rx, tx in positions]
        if not trimmed[0][0] or not trimmed[0][1]:
            continue
        kept[(x, y, cid)] = trimmed
    return kept


def _words(values):
    a = np.ascontiguousarray(values).reshape(-1)
    if a.dtype.itemsize == 4:
        return a.view(np.uint32)
    if a.dtype.itemsize == 2:
        return a.view(np.uint16).astype(np.uint32)
    raise UsageError(f"set_symbol_all: values must have 16- or 32-bit elements, not {a.dtype}")


def _direction(cell, other):
    step = (other[0] - cell[0], other[1] - cell[1])
    for route, s in _STEP.items():
        if s == step:
            return route
    raise AssertionError(f"{cell} and {other} are not neighbours")


def _csl_value(value, ids):
    if isinstance(value, Color):
        return f"@get_color({ids[id(value)]})"
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "item"):
        value = value.item()  # a numpy scalar
    if isinstance(value, (int, float)):
        return repr(value)
    raise UsageError(f"set_param: {value!r} is not a number, a bool or a Color")


def _wsemu_binary():
    """`wsemu python` says where its binary is; else the one next to this package (build or
    install tree), else the PATH's."""
    exe = os.environ.get("WSEMU_EXE")
    if exe:
        return exe
    here = os.path.dirname(os.path.abspath(__file__))
    for rel in ("../../bin/wsemu", "../../../../bin/wsemu"):
        candidate = os.path.normpath(os.path.join(here, rel))
        if os.path.isfile(candidate):
            return candidate
    found = shutil.which("wsemu")
    if not found:
        raise UsageError("SdkLayout.compile: cannot find the wsemu binary (run under `wsemu python`, or put wsemu "
                         "on PATH)")
    return found
