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

-- s with each byte that does not start a valid UTF-8 sequence replaced by
-- U+FFFD, as Wireshark shows a string field's text (and Go's JSON a
-- string's).
local function valid_utf8(s)
	local parts, i = {}, 1
	while i <= #s do
		local c = s:byte(i)
		local n = 0
		if c < 0x80 then
			n = 1
		elseif c >= 0xc2 and c <= 0xdf then
			n = 2
		elseif c >= 0xe0 and c <= 0xef then
			n = 3
		elseif c >= 0xf0 and c <= 0xf4 then
			n = 4
		end
		local ok = n > 0 and i + n - 1 <= #s
		for k = i + 1, i + n - 1 do
			local d = ok and s:byte(k)
			if not d or d < 0x80 or d > 0xbf then
				ok = false
			end
		end
		if ok and n >= 3 then
			local d = s:byte(i + 1)
			if c == 0xe0 and d < 0xa0 or c == 0xed and d > 0x9f or c == 0xf0 and d < 0x90 or c == 0xf4 and d > 0x8f then
				ok = false -- overlong, a surrogate, or past U+10FFFF
			end
		end
		if ok then
			parts[#parts + 1] = s:sub(i, i + n - 1)
			i = i + n
		else
			parts[#parts + 1] = "\239\191\189"
			i = i + 1
		end
	end
	return table.concat(parts)
end

local out = {}
local function value_text(v)
	if type(v) == "string" then
		return valid_utf8(v)
	end
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
