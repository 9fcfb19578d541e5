-- A stand-in for the parts of Wireshark's Lua API the pmnet dissector uses,
-- so a plain Lua interpreter (5.2, 5.4) can run it. Usage:
--   lua wsstub.lua DISSECTOR.lua PACKETS.lua [notree]
-- PACKETS.lua sets PACKETS = {{n=, ts=, src=, sport=, dst=, dport=, hex=}, ...}.
-- For every packet the dissector claims it prints "P n", "I info" and one
-- "F abbrev<TAB>value" line per field value, in tree order. With notree,
-- the dissector is given no tree, as tshark does when it prints only the
-- summary lines (a tree that raises an error when anything is added to it).

local proto
Proto = function(name, desc)
	proto = {name = name, fields = {}, experts = {}, prefs = {}}
	function proto.register_heuristic() end
	return proto
end
ProtoField = setmetatable({}, {__index = function(_, kind)
	return function(abbrev)
		return {abbrev = abbrev, kind = kind}
	end
end})
ProtoExpert = {new = function(abbrev) return {abbrev = abbrev} end}
expert = {group = {}, severity = {}}
Pref = {bool = function(_, v) return v end}
base = {DEC = "dec"}
DissectorTable = {get = function() return {add = function() end} end}
Int64 = {new = function(v) return v end}

local RANGE = {}
RANGE.__index = RANGE
function RANGE.raw(r) return r.s:sub(r.off + 1, r.off + r.n) end
local function range(s, off, n)
	return setmetatable({s = s, off = off, n = n}, RANGE)
end
local function tvb(s)
	local t = {}
	function t.len() return #s end
	function t.raw(_, off, n) return s:sub(off + 1, off + n) end
	function t.reported_length_remaining() return #s end
	return setmetatable(t, {__call = function(_, off, n)
		off = off or 0
		return range(s, off, n or #s - off)
	end})
end

local out = {}
local function value_text(v)
	if type(v) == "number" then
		if v == 0 and 1 / v < 0 then
			return "-0" -- a double's negative zero, as Wireshark shows it
		end
		if v == math.floor(v) and math.abs(v) < 2 ^ 53 then
			return string.format("%d", v)
		end
		return string.format("%.17g", v)
	end
	return tostring(v)
end
local ITEM = {}
ITEM.__index = ITEM
local function item() return setmetatable({}, ITEM) end
function ITEM.add(_, pf, a, b)
	local v = b
	if v == nil and getmetatable(a) ~= RANGE then
		v = a
	end
	if type(pf) == "table" and pf.abbrev and v ~= nil then
		out[#out + 1] = "F " .. pf.abbrev .. "\t" .. value_text(v)
	end
	return item()
end
function ITEM.append_text() end
function ITEM.set_generated() end
function ITEM.add_proto_expert_info(_, e, text)
	out[#out + 1] = "E " .. e.abbrev .. "\t" .. text
end

-- What Wireshark's tostring gives of the tree it passes when none is built.
local NOTREE = setmetatable({}, {__tostring = function()
	return "TreeItem: expired=false, has item=false, has subtree=false, they are the same"
end})

dofile(arg[1])
dofile(arg[2])
proto.prefs.inflate = true
for _, p in ipairs(PACKETS) do
	local bytes = p.hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
	local pinfo = {number = p.n, abs_ts = p.ts, visited = false, src = p.src, dst = p.dst, src_port = p.sport,
		dst_port = p.dport, cols = {}}
	out = {}
	local tree = item()
	if arg[3] == "notree" then
		tree = NOTREE
	end
	local n = proto.dissector(tvb(bytes), pinfo, tree)
	if n > 0 then
		print("P " .. p.n)
		print("I " .. tostring(pinfo.cols.info))
		for _, l in ipairs(out) do
			print(l)
		end
	end
end
