-- Runtime: the same decoding, recognition and version inference as pmdump.
-- Only arithmetic that means the same in Lua 5.2 and 5.4 is used (no
-- integer division or bitwise operators). It names no version, and no
-- offset of any packet: all it knows of the wire is in the tables above.

for _, f in ipairs(PF_LIST) do
	pmnet.fields[#pmnet.fields + 1] = f
end

local EX_MALFORMED = ProtoExpert.new("pmnet.malformed", "Malformed game packet",
	expert.group.MALFORMED, expert.severity.ERROR)
local EX_UNKNOWN = ProtoExpert.new("pmnet.unknown", "Unknown game packet name",
	expert.group.UNDECODED, expert.severity.WARN)
pmnet.experts = {EX_MALFORMED, EX_UNKNOWN}

pmnet.prefs.inflate = Pref.bool("Inflate reassembled difs", true,
	"Inflate each reassembled stdf dif to show its inflated size (costs time on long captures)")

local floor = math.floor
local byte, sub, format = string.byte, string.sub, string.format

-- text of an integer value. (math.floor gives an integer in Lua 5.4, whose
-- text has no ".0"; Lua 5.2 prints a whole double without one.)
local function int(v)
	return tostring(floor(v))
end

-- bit i (0-based) of a non-negative integer v.
local function bit_set(v, i)
	return floor(v / 2 ^ i) % 2 == 1
end

-- text of a float as pmdump prints it (Go's strconv, 'f' 1 or 'g' 6).
local function fmt_float(f)
	if f ~= f then
		return "NaN"
	elseif f == math.huge then
		return "+Inf"
	elseif f == -math.huge then
		return "-Inf"
	elseif f == floor(f) and math.abs(f) < 1e15 then
		return string.format("%.1f", f)
	end
	return string.format("%.6g", f)
end

-- length of the valid UTF-8 sequence at i, or 0.
local function utf8_len(s, i)
	local c = s:byte(i)
	local n
	if c >= 0xc2 and c <= 0xdf then
		n = 2
	elseif c >= 0xe0 and c <= 0xef then
		n = 3
	elseif c >= 0xf0 and c <= 0xf4 then
		n = 4
	else
		return 0
	end
	for k = i + 1, i + n - 1 do
		local d = s:byte(k)
		if d == nil or d < 0x80 or d > 0xbf then
			return 0
		end
	end
	return n
end

local ESCAPES = {[7] = "\\a", [8] = "\\b", [9] = "\\t", [10] = "\\n", [11] = "\\v", [12] = "\\f", [13] = "\\r",
	[34] = "\\\"", [92] = "\\\\"}

-- s quoted as Go's strconv.Quote does for the game's host names: ASCII
-- escapes as Go writes them, valid UTF-8 as is (Go would also escape the
-- few non-printable non-ASCII characters), other bytes as \xNN.
local function quote(s)
	local out = {"\""}
	local i = 1
	while i <= #s do
		local c = s:byte(i)
		if ESCAPES[c] then
			out[#out + 1] = ESCAPES[c]
			i = i + 1
		elseif c >= 0x20 and c < 0x7f then
			out[#out + 1] = string.char(c)
			i = i + 1
		else
			local n = c >= 0x80 and utf8_len(s, i) or 0
			if n > 0 then
				out[#out + 1] = s:sub(i, i + n - 1)
				i = i + n
			else
				out[#out + 1] = string.format("\\x%02x", c)
				i = i + 1
			end
		end
	end
	out[#out + 1] = "\""
	return table.concat(out)
end

-- text up to the first NUL.
local function text(raw)
	local z = raw:find("\0", 1, true)
	if z then
		return raw:sub(1, z - 1)
	end
	return raw
end

-- The negative value the legacy game meant by the four bytes it wrote:
-- every non-zero byte stands for byte - 256 (decode.RecoverNegative).
local function recover_negative(raw)
	if raw < 0 then
		raw = raw + 2 ^ 32
	end
	local v = 0
	for k = 3, 0, -1 do
		local b = floor(raw / 256 ^ k) % 256
		v = v * 256
		if b ~= 0 then
			v = v + b - 256
		end
	end
	return v
end

-- the value the game meant, and whether it differs from the raw one.
local function meant(f, v)
	if f.recover == "negative" then
		if v == 0 then
			return 0, false
		end
		return recover_negative(v), true
	elseif f.recover == "minus1000" then
		return v - 1000, true
	end
	return v, false
end

-- Payloads are decoded from their bytes as a Lua string (one copy per
-- packet), positions 0-based as in the tvb.
local function read_i32(s, pos, be)
	local a, b, c, d = s:byte(pos + 1, pos + 4)
	local u
	if be then
		u = ((a * 256 + b) * 256 + c) * 256 + d
	else
		u = ((d * 256 + c) * 256 + b) * 256 + a
	end
	if u >= 2147483648 then
		u = u - 4294967296
	end
	return u
end

local function read_int(s, pos, f, be)
	local i = pos + 1
	local t = f.type
	if t == "u8" then
		return s:byte(i)
	elseif t == "s8" then
		local b = s:byte(i)
		if b >= 128 then
			return b - 256
		end
		return b
	elseif t == "u16" then
		local a, b = s:byte(i, i + 1)
		if be then
			return a * 256 + b
		end
		return b * 256 + a
	end
	return read_i32(s, pos, be)
end

-- A NaN with its sign bit clear (0/0 has it set on most machines).
local NAN = 0 / 0
if tostring(NAN):sub(1, 1) == "-" then
	NAN = -NAN
end

-- little-endian IEEE-754 double at pos.
local function read_f64(s, pos)
	local b1, b2, b3, b4, b5, b6, b7, b8 = s:byte(pos + 1, pos + 8)
	local sign = 1
	if b8 >= 128 then
		sign = -1
	end
	local exp = (b8 % 128) * 16 + floor(b7 / 16)
	local mant = (((((b7 % 16) * 256 + b6) * 256 + b5) * 256 + b4) * 256 + b3) * 65536 + b2 * 256 + b1
	if exp == 2047 then
		if mant == 0 then
			return sign * math.huge
		elseif sign < 0 then
			return -NAN
		end
		return NAN
	elseif exp == 0 then
		if mant == 0 and sign < 0 then
			return -0.0 -- sign * 0 is +0 where 0 is an integer (Lua 5.3 on)
		end
		return sign * mant * 2 ^ -1074
	end
	return sign * (mant + 2 ^ 52) * 2 ^ (exp - 1075)
end

-- decode_field decodes one field at pos: its value and length, or nil and
-- an error. res holds the fields before it (for sizes and counts).
local function decode_field(raw, len, f, pos, be, res)
	local rest = len - pos
	local t = f.type
	if t == "u8" or t == "s8" or t == "u16" or t == "i32" then
		if rest >= f.size then
			return read_int(raw, pos, f, be), f.size
		end
	elseif t == "f64" then
		if rest >= 8 then
			return read_f64(raw, pos), 8
		end
	elseif t == "str16" then
		if rest >= 16 then
			return text(raw:sub(pos + 1, pos + 16)), 16
		end
	elseif t == "strn" then
		-- an int32 length n, n bytes of text, a NUL
		if rest >= 4 then
			local n = read_i32(raw, pos, be)
			if n < 0 or n + 5 > rest then
				return nil, string.format("text of %d bytes but %d bytes follow its length: %s", n, rest - 4, ERR_OVERRUN)
			end
			if raw:byte(pos + 5 + n) ~= 0 then
				return nil, string.format("text of %d bytes is not followed by a NUL: %s", n, ERR_INVALID)
			end
			return text(raw:sub(pos + 5, pos + 4 + n)), n + 5
		end
	elseif t == "data" then
		local n = res.v[f.ref]
		if n < 0 or n > rest then
			return nil, string.format("size %s but %d bytes follow: %s", int(n), rest, ERR_OVERRUN)
		end
		return n, n
	elseif t == "rest" then
		return rest, rest
	elseif t == "group" then
		local n = res.v[f.ref]
		local per = 0
		for _, s in ipairs(f.sub) do
			per = per + s.size
		end
		if n * per > rest then
			return nil, string.format("%d entries of %d bytes but %d bytes follow: %s", n, per, rest, ERR_OVERRUN)
		end
		local q = pos
		local entries = res.entries
		for _ = 1, n do
			for _, s in ipairs(f.sub) do
				entries[#entries + 1] = {v = read_int(raw, q, s, be), pos = q, n = s.size}
				q = q + s.size
			end
		end
		return n, q - pos
	end
	return nil, string.format("needs %d bytes, %d left: %s", f.size, rest, ERR_SHORT)
end

local function piece_check(l, vals)
	local seq, count = vals[l.piece.seq], vals[l.piece.count]
	if count == 0 then
		return "piece count is 0"
	end
	if seq >= count then
		return string.format("piece seq %d is not below piece count %d", seq, count)
	end
	local start = vals[l.piece.start]
	if start < 0 then
		return string.format("start byte %s is negative", int(start))
	end
	return nil
end

-- decode decodes the payload with layout l, as decode.Decode does:
-- {layout, v, p, n, entries, err}: the value, position and length of each
-- field that decoded, by its index in the layout (no table per field).
local NO_ENTRIES = {}

-- With full false, only what a summary line needs is decoded when the
-- layout has a quick decoder: the values of the key fields and of the
-- fields with a role, no positions (res.quick).
local function decode(raw, len, l, full)
	if not full and l.quick then
		local v = l.quick(raw, len)
		if v then
			return {layout = l, v = v, quick = true}
		end
	elseif l.fast then
		local v, p, n = l.fast(raw, len)
		if v then
			return {layout = l, v = v, p = p, n = n, entries = NO_ENTRIES}
		end
	end
	local res = {v = {}, p = {}, n = {}, entries = {}}
	res.layout = l
	local be = l.be
	local short
	if len < l.min then
		short = string.format("%s: %d bytes, layout needs %d: %s", l.name, len, l.min, ERR_SHORT)
	end
	if l.max >= 0 and len > l.max then
		res.err = string.format("%s: %d bytes, layout has at most %d: %s", l.name, len, l.max, ERR_LONG)
		return res
	end
	local pos = 4
	local rv, rp, rn = res.v, res.p, res.n
	local fields = l.fields
	for i = 1, #fields do
		local f = fields[i]
		if f.optional and pos == len then
			break
		end
		local v, n = decode_field(raw, len, f, pos, be, res)
		if v == nil then
			res.err = short or string.format("%s field %s at offset %d: %s", l.name, f.name, pos, n)
			return res
		end
		rv[i], rp[i], rn[i] = v, pos, n
		pos = pos + n
	end
	if short then
		res.err = short
	elseif pos ~= len then
		res.err = string.format("%s: %d bytes left after the last field: %s", l.name, len - pos, ERR_LONG)
	elseif l.piece then
		local err = piece_check(l, res.v)
		if err then
			res.err = string.format("%s: %s: %s", l.name, err, ERR_INVALID)
		end
	end
	return res
end

-- Text of a value, as pmdump's summary shows it.
local function bits_text(names, v)
	if v == MENU_MOVE then
		return "menu/esc"
	end
	local out = {}
	for i, n in ipairs(names) do
		if bit_set(v, i - 1) then
			out[#out + 1] = n
		end
	end
	local high = floor(v / 2 ^ #names)
	if high ~= 0 then
		out[#out + 1] = string.format("0x%x", high * 2 ^ #names)
	end
	return table.concat(out, "|")
end

-- value_text is the text of field f's value v of length n.
local function value_text(f, v, n)
	if f.type == "f64" then
		return fmt_float(v)
	elseif f.type == "str16" or f.type == "strn" then
		return quote(v)
	elseif f.type == "data" or f.type == "rest" then
		return int(n) .. " bytes"
	end
	local m, differs = meant(f, v)
	if differs then
		return int(m) .. "(raw " .. int(v) .. ")"
	end
	local s = int(v)
	if f.enum then
		local name = f.enum[v]
		if name then
			s = s .. "(" .. name .. ")"
		end
	end
	if f.bits and v ~= 0 then
		s = s .. "[" .. bits_text(f.bits, v) .. "]"
	end
	return s
end

-- the key fields of a layout, by index, with their "name=" prefixes, and
-- whether each is a plain integer (shown as it is).
local function key_fields(l)
	local k = l.keys
	if not k then
		k = {idx = {}, prefix = {}, plain = {}}
		for i, f in ipairs(l.fields) do
			if f.key then
				k.idx[#k.idx + 1] = i
				k.prefix[#k.prefix + 1] = f.name .. "="
				local int_type = f.type == "u8" or f.type == "s8" or f.type == "u16" or f.type == "i32"
				k.plain[#k.plain + 1] = int_type and not f.recover and not f.bits and not f.enum
			end
		end
		l.keys = k
	end
	return k
end

local function summary(res)
	local l = res.layout
	if not l then
		return ""
	end
	-- every key field is there when the payload decoded without an error
	local s = not res.err and l.summary(res.v)
	if s then
		return s
	end
	local k, rv, fields = key_fields(l), res.v, l.fields
	local out, n = {}, 0
	for j, i in ipairs(k.idx) do
		local v = rv[i]
		if v ~= nil then
			n = n + 1
			if k.plain[j] then
				out[n] = k.prefix[j] .. tostring(floor(v))
			else
				out[n] = k.prefix[j] .. value_text(fields[i], v, res.n[i])
			end
		end
	end
	return table.concat(out, " ")
end

-- The versions and layouts as the inference reads them, made once from the
-- generated tables: a set of versions is a number, the sum of 2^v over its
-- versions v (no bitwise operators); each layout gets the set of versions
-- that have it (vset, vlist), each version its layout of each name
-- (VERSIONS[v].layouts) and the kinds of packet it has, each name its
-- distinct layouts in decode's order (NAMES[name].layouts, as
-- decode.LayoutsOf) and the set of versions that have it.
local NUM_VERSIONS = #VERSIONS
local POW = {}
local VERSION_ID = {}
for v = 0, NUM_VERSIONS do
	POW[v] = 2 ^ v
end
for v, vi in ipairs(VERSIONS) do
	VERSION_ID[vi.name] = v
	vi.layouts, vi.kinds = {}, {}
	local sizes = {}
	for _, n in ipairs(vi.state_sizes) do
		sizes[n] = true
	end
	vi.sizes = sizes
end
local NAMES = {}
local DIR_OF = {}
for _, l in ipairs(LAYOUT_LIST) do
	l.vlist, l.vset = {}, 0
	for _, name in ipairs(l.versions) do
		local v = VERSION_ID[name]
		l.vlist[#l.vlist + 1] = v
		l.vset = l.vset + POW[v]
		VERSIONS[v].layouts[l.name] = l
		VERSIONS[v].kinds[l.kind] = true
	end
	local nm = NAMES[l.name]
	if not nm then
		-- a name's first layout says how Explain words a misfit
		nm = {layouts = {}, named = 0, kind = l.kind, pieces = l.piece ~= nil}
		NAMES[l.name] = nm
		DIR_OF[l.name] = l.dir
	end
	nm.layouts[#nm.layouts + 1] = l
	nm.named = nm.named + l.vset
end

local function has(s, v)
	return floor(s / POW[v]) % 2 == 1
end

local function inter(a, b)
	local s = 0
	for v = 1, NUM_VERSIONS do
		if has(a, v) and has(b, v) then
			s = s + POW[v]
		end
	end
	return s
end

local function set_len(s)
	local n = 0
	for v = 1, NUM_VERSIONS do
		if has(s, v) then
			n = n + 1
		end
	end
	return n
end

local function oldest(s)
	for v = 1, NUM_VERSIONS do
		if has(s, v) then
			return v
		end
	end
	return 0
end

-- the version of s with the highest prior (the oldest of equals), 0 for
-- an empty set (decode.VersionSet.Best).
local function best_of(s)
	local best = 0
	for v = 1, NUM_VERSIONS do
		if has(s, v) and (best == 0 or VERSIONS[v].prior > VERSIONS[best].prior) then
			best = v
		end
	end
	return best
end

local function version_name(v)
	local vi = VERSIONS[v]
	return vi and vi.name or "unknown"
end

-- a set named compactly, runs of three or more as first…last
-- (decode.VersionSet.Range).
local function set_range(s)
	local parts = {}
	local v = 1
	while v <= NUM_VERSIONS do
		if has(s, v) then
			local w = v
			while w < NUM_VERSIONS and has(s, w + 1) do
				w = w + 1
			end
			if w == v then
				parts[#parts + 1] = VERSIONS[v].name
			elseif w == v + 1 then
				parts[#parts + 1] = VERSIONS[v].name
				parts[#parts + 1] = VERSIONS[w].name
			else
				parts[#parts + 1] = VERSIONS[v].name .. "…" .. VERSIONS[w].name
			end
			v = w + 1
		else
			v = v + 1
		end
	end
	return table.concat(parts, ", ")
end

-- agrees tells whether a packet decoded cleanly also agrees with version v
-- beyond its layout (decode.Agrees): a piece is cut as v cuts them, every
-- piece but the last piece_size bytes at seq × piece_size, the last shorter.
local function agrees(res, v)
	local pc = res.layout.piece
	if not pc then
		return true
	end
	local rv = res.v
	local ps = VERSIONS[v].piece_size
	local seq, count, size = rv[pc.seq], rv[pc.count], rv[pc.size]
	if rv[pc.start] ~= seq * ps then
		return false
	end
	if seq < count - 1 then
		return size == ps
	end
	return size < ps
end

-- fits decodes the payload in each distinct layout of its name and says
-- which versions it fits (decode.Fits): the versions that have the name,
-- those whose layout decodes it, and those of them it agrees with; and the
-- result of each layout.
local function fits(raw, len, nm, full)
	local decodes, clean = 0, 0
	local results = {}
	for _, l in ipairs(nm.layouts) do
		local r = decode(raw, len, l, full)
		results[l] = r
		if not r.err then
			decodes = decodes + l.vset
			for _, v in ipairs(l.vlist) do
				if agrees(r, v) then
					clean = clean + POW[v]
				end
			end
		end
	end
	return decodes, clean, results
end

-- plausible narrows a set of versions of both byte orders to the byte
-- order that reads the smaller game frame (decode.Plausible).
local function plausible(raw, len, name, s, results, full)
	local be, le = 0, 0
	for v = 1, NUM_VERSIONS do
		if has(s, v) then
			if VERSIONS[v].be then
				be = be + POW[v]
			else
				le = le + POW[v]
			end
		end
	end
	if be == 0 or le == 0 then
		return s
	end
	local function frame(set)
		local l = VERSIONS[oldest(set)].layouts[name]
		local r = results[l] or decode(raw, len, l, full)
		if r.err or l.frame == 0 or r.v[l.frame] == nil then
			return nil
		end
		local f = r.v[l.frame]
		if f < 0 then
			f = f + 4294967296 -- compared as uint32
		end
		return f
	end
	local fb, fl = frame(be), frame(le)
	if not fb or not fl then
		return s
	elseif fb < fl then
		return be
	end
	return le
end

-- explain is the reason a payload fits no version (decode.Explain).
local function explain(name, len)
	if NAMES[name].pieces then
		return name .. " header " .. ERR_NO_VERSION
	end
	return format("%s of %d bytes %s", name, len, ERR_NO_VERSION)
end

-- Recognition and conversations, as package session does it.
local convs = {}    -- client endpoint -> conversation
local servers = {}  -- endpoints known to be game servers
local global_version = 0 -- the version last told by any conversation
local frames = {}   -- frame number -> what the first pass found
-- frame number -> the dif its piece completed: compressed size, pieces,
-- inflated size (numbers, so a long capture holds no object per dif)
local dif_compressed, dif_pieces, dif_inflated = {}, {}, {}
local conv_count = 0

-- new_conv is a conversation that has seen nothing: no version, no
-- evidence. version is its likeliest version (0: none yet), versions the
-- set of those the evidence fits best; score counts the packets that fit
-- each version, told those that told versions apart, fitted and misfits
-- the packets of each name that fit some version and none (misfit_name
-- the name that made it of no known version), looked the packets of each
-- name checked against every version; unrecognised says why it is of no
-- known version.
local function new_conv()
	local score = {}
	for v = 1, NUM_VERSIONS do
		score[v] = 0
	end
	return {id = 0, version = 0, versions = 0, state_size = 0, score = score, told = 0, fitted = {}, misfits = {},
		looked = {}, shared = false, player = -1, joined = false, join_replies = 0, last = {}}
end

-- pick is the set of the versions of the best score (> 0), of those whose
-- states have the conversation's size when sized.
local function pick(c, sized)
	local top, set = 0, 0
	local score = c.score
	for v = 1, NUM_VERSIONS do
		if not sized or VERSIONS[v].sizes[c.state_size] then
			local s = score[v]
			if s > top then
				top, set = s, POW[v]
			elseif s == top and s > 0 then
				set = set + POW[v]
			end
		end
	end
	return set
end

-- choose sets the conversation's versions to those of the best score (of
-- those with its state size, once known, when any has it) and, once a
-- packet told versions apart, its version to the likeliest of them.
local function choose(c)
	if c.unrecognised then
		return
	end
	local set = 0
	if c.state_size > 0 then
		set = pick(c, true)
	end
	if set == 0 then
		set = pick(c, false)
	end
	if set == 0 then
		return
	end
	c.versions = set
	if c.told > 0 then
		c.version = best_of(set)
	end
end

-- most_misfit says whether more of c's packets of known names fit no
-- version than fit some.
local function most_misfit(c)
	local fitted, misfits = 0, 0
	for _, n in pairs(c.fitted) do
		fitted = fitted + n
	end
	for _, n in pairs(c.misfits) do
		misfits = misfits + n
	end
	return misfits > fitted
end

-- learn_fit takes what a packet of name says: best, the versions it fits
-- (0 for a misfit), and whether that told versions apart. It is of no
-- known version once, of its packets of known names, those that fit none
-- outnumber those that fit (twice at least), or once two packets of one
-- name fit none and none of that name fits; of a version again once the
-- packets of the name that told fit as often as not.
local function learn_fit(c, best, told, name, len)
	local fitted, misfits = c.fitted[name] or 0, c.misfits[name] or 0
	if best == 0 then
		misfits = misfits + 1
		c.misfits[name] = misfits
		if not c.unrecognised and misfits >= MIN_MISFITS and (fitted == 0 or most_misfit(c)) then
			c.unrecognised, c.misfit_name = explain(name, len), name
			c.version, c.versions = 0, 0
		end
		return
	end
	fitted = fitted + 1
	c.fitted[name] = fitted
	if c.unrecognised and name == c.misfit_name and fitted >= misfits then
		c.unrecognised = nil -- the packets of that name that fit caught up
	end
	if told then
		c.told = c.told + 1
	end
	local score = c.score
	for v = 1, NUM_VERSIONS do
		if has(best, v) then
			score[v] = score[v] + 1
		end
	end
	choose(c)
end

-- learn_shared_socket takes the evidence that the server sent from its
-- listening port, which only the versions with one server socket do.
local function learn_shared_socket(c)
	if c.shared or c.unrecognised then
		return
	end
	c.shared = true
	for v = 1, NUM_VERSIONS do
		if VERSIONS[v].shared_socket then
			c.score[v] = c.score[v] + 1
		end
	end
	c.told = c.told + 1
	choose(c)
end

-- learn_state_size narrows the conversation's versions to those whose
-- states have the size its difs inflate to (session's LearnStateSize).
local function learn_state_size(c, size)
	if c.state_size == size or size <= 0 then
		return
	end
	c.state_size = size
	choose(c)
end

-- The result of a packet of a conversation of no known version: no
-- layout, the reason.
local function unrecognised_result(name, len)
	return {v = {}, p = {}, n = {}, entries = NO_ENTRIES, err = explain(name, len)}
end

-- track_decode chooses the version a packet of a known name nm is decoded
-- in, as the tracker does: the conversation's (or, for a conversation
-- without one, the version last told) when the packet decodes and agrees
-- with it, once LOOKS packets of the name were checked against every
-- version; else the version its own bytes point to, as evidence for the
-- conversation; a packet the snap length cut says nothing of the version
-- and is decoded in the likeliest one. It returns the version (0 for
-- none), whether the packet told versions apart, and the decoded packet.
local function track_decode(raw, len, name, nm, c, full, truncated)
	local v = global_version
	if c.version ~= 0 or c.unrecognised then
		v = c.version
	end
	if truncated then
		if v == 0 or not VERSIONS[v].layouts[name] then
			if c.versions ~= 0 then
				v = best_of(c.versions)
			end
			if v == 0 or not VERSIONS[v].layouts[name] then
				v = best_of(nm.named)
			end
		end
		return v, false, decode(raw, len, VERSIONS[v].layouts[name], full)
	end
	local looked = c.looked[name] or 0
	if v ~= 0 and looked >= LOOKS then
		local l = VERSIONS[v].layouts[name]
		if l then
			local r = decode(raw, len, l, full)
			if not r.err and agrees(r, v) then
				c.fitted[name] = (c.fitted[name] or 0) + 1
				return v, false, r
			end
		end
	end
	if looked < LOOKS then
		c.looked[name] = looked + 1
	end
	local decodes, clean, results = fits(raw, len, nm, full)
	local best = clean
	if best == 0 then
		best = decodes
	end
	local told = best ~= 0 and best ~= nm.named
	if set_len(best) > 1 then
		local b = plausible(raw, len, name, best, results, full)
		if b ~= best then
			-- it fits both byte orders (a 10-byte cdat): the likelier
			-- one scores, but it tells nothing for sure
			best, told = b, false
		end
	end
	learn_fit(c, best, told, name, len)
	if best == 0 then
		-- fits no version: decoded in the conversation's version (or the
		-- one last told) to say what is wrong with it; or, in a
		-- conversation of no known version, not at all
		if c.unrecognised then
			return 0, false, unrecognised_result(name, len)
		end
		if v == 0 or not has(nm.named, v) then
			v = best_of(nm.named)
		end
		local l = VERSIONS[v].layouts[name]
		return v, false, results[l] or decode(raw, len, l, full)
	end
	if not has(best, v) then
		local both = inter(best, c.versions)
		if both ~= 0 then
			v = best_of(both)
		else
			v = best_of(best)
		end
	end
	local l = VERSIONS[v].layouts[name]
	return v, told, results[l] or decode(raw, len, l, full)
end

local function printable(name)
	for i = 1, 4 do
		local c = name:byte(i)
		if c < 0x21 or c > 0x7e then
			return false
		end
	end
	return true
end

local function other_dir(d)
	if d == "c2s" then
		return "s2c"
	end
	return "c2s"
end

local function on_game_endpoint(src, dst, dport)
	local function pair(client, server)
		local c = convs[client]
		return c ~= nil and (server == c.server or server == c.listen)
	end
	return pair(src, dst) or pair(dst, src) or dport == LISTEN_PORT
end

-- restarts tells whether a packet of kind k from the client of c starts a
-- new session: a handshake, or a join request after a join reply in a
-- version without a handshake.
local function restarts(c, k)
	if k == KIND_HANDSHAKE then
		return true
	elseif k == KIND_JOIN_REQUEST then
		return c.join_replies > 0 and c.version ~= 0 and not VERSIONS[c.version].kinds[KIND_HANDSHAKE]
	end
	return false
end

-- learn updates the conversation from what the packet says about it.
local function learn(c, res, kind, server, dir)
	local l = res.layout
	local k = l and l.kind
	if k == KIND_HANDSHAKE then
		c.listen = server
		servers[server] = true
		return
	end
	if k ~= KIND_HANDSHAKE_REPLY then
		c.joined = true
	end
	if c.server ~= server then
		c.server = server
		servers[server] = true
	end
	if k == KIND_JOIN_REPLY then
		c.join_replies = c.join_replies + 1
	end
	if kind ~= "game" or k == KIND_JOIN_REQUEST then
		return
	end
	local pl = res.v[l.player]
	if k == KIND_JOIN_REPLY then
		if pl ~= PLAYER_SERVER_FULL then
			c.player = pl
		end
	elseif dir == "c2s" and pl and pl > SERVER_PLAYER and pl <= MAX_PLAYER then
		c.player = pl
	end
end

-- Reassembly of stdf pieces, with the rules of package reassemble: a dif
-- (client, slsn, src, dst) is complete when pieces 0..count-1 have arrived
-- with the same count and tile the compressed bytes from 0 (else corrupt);
-- duplicates must be identical; a dif whose client has sent nothing for it
-- for ABANDON_AFTER seconds, or beyond the pending limits, is abandoned;
-- the last FINISHED_KEEP finished difs of a client ignore late pieces. On
-- the frame that completes a dif, its compressed size, piece count and
-- (where Wireshark can inflate) inflated size are shown.
local asm = {msgs = {}, clients = {}, total = 0, order = {}}

local function remove_value(list, x)
	for i, y in ipairs(list) do
		if y == x then
			table.remove(list, i)
			return true
		end
	end
	return false
end

local function asm_finish(c, m)
	if asm.msgs[m.key] == m then
		asm.msgs[m.key] = nil
		if remove_value(c.pending, m) then
			asm.total = asm.total - 1
			remove_value(asm.order, m)
		end
	end
	if not c.done[m.key] then
		-- a ring of the last FINISHED_KEEP keys, and the set of them
		local old = c.ring[c.next]
		if old then
			c.done[old] = nil
		end
		c.ring[c.next] = m.key
		c.done[m.key] = true
		c.next = c.next % FINISHED_KEEP + 1
	end
	m.starts, m.datas = nil, nil
end

local function asm_finished(c, key)
	return c.done[key] == true
end

local function asm_abandon_stale(c)
	local i = 1
	while i <= #c.pending do
		local m = c.pending[i]
		if c.newest - m.last_ts <= ABANDON_AFTER then
			i = i + 1
		else
			asm_finish(c, m)
		end
	end
end

-- asm_add adds one piece (seq, count, start, data) that arrived at ts; it
-- returns the compressed dif's size and piece count when the piece
-- completes it, and with bytes true the compressed dif.
local function asm_add(client, cid, key, seq, count, start, data, ts, bytes)
	local c = asm.clients[client]
	if not c then
		c = {pending = {}, done = {}, ring = {}, next = 1, newest = -math.huge, cid = cid}
		asm.clients[client] = c
	end
	if c.cid ~= cid then
		-- a new session of the same client endpoint
		while #c.pending > 0 do
			asm_finish(c, c.pending[1])
		end
		c.done, c.ring, c.next, c.cid = {}, {}, 1, cid
	end
	if ts > c.newest then
		c.newest = ts
		asm_abandon_stale(c)
	end
	local m = asm.msgs[key]
	if not m then
		if asm_finished(c, key) then
			return nil
		end
		m = {key = key, count = count, starts = {}, datas = {}, n = 0}
		if count < 1 or count > MAX_PIECES then
			asm_finish(c, m)
			return nil
		end
		while #c.pending >= PENDING_PER_CLIENT do
			asm_finish(c, c.pending[1])
		end
		while asm.total >= PENDING_TOTAL do
			local o = asm.order[1]
			asm_finish(asm.clients[o.client], o)
		end
		m.client = client
		asm.msgs[key] = m
		c.pending[#c.pending + 1] = m
		asm.order[#asm.order + 1] = m
		asm.total = asm.total + 1
	end
	m.last_ts = ts
	if count ~= m.count or seq < 0 or seq >= count or start < 0 or start + #data > MAX_COMPRESSED then
		asm_finish(c, m) -- corrupt
		return nil
	end
	local starts, datas = m.starts, m.datas
	local had = starts[seq]
	if had then
		if had ~= start or datas[seq] ~= data then
			asm_finish(c, m) -- corrupt
		end
		return nil
	end
	starts[seq], datas[seq] = start, data
	m.n = m.n + 1
	if m.n < count then
		return nil
	end
	local size = 0
	for i = 0, count - 1 do
		if starts[i] ~= size then
			asm_finish(c, m) -- a hole or an overlap: corrupt
			return nil
		end
		size = size + #datas[i]
	end
	asm_finish(c, m)
	if bytes then
		return size, count, table.concat(datas, "", 0, count - 1)
	end
	return size, count
end

-- inflated_size is the size a reassembled dif inflates to, or nil when it
-- does not inflate (not zlib, damaged, a wrong checksum, or past MAX_STATE).
local function inflated_size(z)
	local n = deflate_size(z, MAX_STATE)
	if not n or ByteArray == nil then
		return n
	end
	local ok, u = pcall(function()
		local r = ByteArray.new(z, true):tvb("Reassembled dif"):range()
		-- uncompress_zlib in newer Wireshark, uncompress in 4.0 (a missing
		-- method raises an error rather than giving nil).
		local ok, u = pcall(function() return r:uncompress_zlib("Inflated dif") end)
		if not ok then
			u = r:uncompress("Inflated dif")
		end
		return u and u:len()
	end)
	if ok and u == n then
		return n
	end
	return nil
end

-- reassemble adds a piece to its dif; the frame that completes the dif
-- (number) gets its figures, and with measure (and the preference) its
-- inflated size: the first dif of a conversation that inflates tells the
-- size of its states, which narrows its versions (as the engine tells the
-- tracker).
local function reassemble(raw, res, client, conv, number, ts, measure)
	local rv, d = res.v, res.layout.dif
	local slsn = d.slsn > 0 and rv[d.slsn] or -1
	-- (%d: no "%.14g" for each number, as concatenation does in Lua 5.2)
	local key = format("%s|%d|%d|%d", client, slsn, rv[d.src], rv[d.dst])
	local pc = res.layout.piece
	local dp, dn = pc.at, rv[pc.data] -- a data field's value is its length
	if res.p then
		dp = res.p[pc.data]
	end
	measure = measure and pmnet.prefs.inflate
	local size, count, z = asm_add(client, conv.id, key, rv[pc.seq], rv[pc.count], rv[pc.start],
		sub(raw, dp + 1, dp + dn), ts, measure)
	if not size then
		return
	end
	local src = rv[d.src]
	if src == rv[d.dst] and src ~= 0 then
		return -- a dif from a frame to itself is corrupt (package replay): no figures
	end
	dif_compressed[number], dif_pieces[number] = size, count
	if size > 0 and measure then
		local n = inflated_size(z)
		dif_inflated[number] = n
		if n and conv.state_size == 0 then
			learn_state_size(conv, n)
		end
	end
end

local port_text = {} -- port -> ":port"

local function endpoint(addr, port)
	local p = port_text[port]
	if not p then
		p = ":" .. int(port)
		port_text[port] = p
	end
	return tostring(addr) .. p
end

-- What the first pass found of a frame is kept for the whole capture, so
-- the records of frames are shared (most frames are alike; a dif's figures
-- are in the dif tables). A record is the packet's name and kind (game,
-- malformed, unknown), the version shown (era), the layout it was decoded
-- with (nil for an unknown name, or a packet of a conversation of no known
-- version), its direction, player and error, and the versions its
-- conversation's evidence allowed.
local shared = {}

local INTERN_BY = {"name", "kind", "era", "layout", "dir", "player", "err", "versions"}
local RECORD = {} -- the key of the record at the end of a path

local function intern(st)
	-- A tree of tables by each field, so that finding the shared record
	-- builds no string.
	local t = shared
	for _, k in ipairs(INTERN_BY) do
		local v = st[k]
		if v == nil then
			v = false
		end
		local sub = t[v]
		if not sub then
			sub = {}
			t[v] = sub
		end
		t = sub
	end
	local s = t[RECORD]
	if not s then
		t[RECORD] = st
		s = st
	end
	return s
end

-- first_pass recognises one datagram (frame number, len bytes, named name,
-- sent in direction dir when the name is a game packet's) and updates the
-- conversations, as session.Tracker.Process does; it returns what the
-- frame is, or nil when it is not game traffic, and the decoded packet.
-- With measure (a tree is built) every field is decoded and a completed
-- dif is inflated; without, only what the summary line and the
-- conversations need.
local function first_pass(buf, len, name, dir, pinfo, number, measure)
	local src_port, dst_port = pinfo.src_port, pinfo.dst_port
	local src, dst = endpoint(pinfo.src, src_port), endpoint(pinfo.dst, dst_port)
	if not dir then
		if not on_game_endpoint(src, dst, dst_port) then
			return nil
		end
		local st = {kind = "unknown", name = name, era = "unknown", dir = "?", player = -1}
		local c = convs[src] or convs[dst]
		if c then
			st.era, st.player, st.versions = version_name(c.version), c.player, c.versions
			if c.client == src then
				st.dir = "c2s"
			else
				st.dir = "s2c"
			end
		end
		return intern(st)
	end
	local nm = NAMES[name]
	local client, server = src, dst
	local server_port = dst_port
	if dir == "s2c" then
		client, server = dst, src
		server_port = src_port
	end
	local existing = convs[client]
	local named = dir -- the direction the packet's name is sent in
	if not existing or server ~= existing.server and server ~= existing.listen then
		-- The name says one direction, but a known conversation's
		-- addresses say the other (a malformed stak the server sent, say):
		-- the addresses tell, as in package session.
		local c = convs[server]
		if c and (client == c.server or client == c.listen) then
			client, server, existing = server, client, c
			dir = other_dir(dir)
			if server == src then
				server_port = src_port
			else
				server_port = dst_port
			end
		end
	end
	if existing and existing.joined and dir == "c2s" and restarts(existing, nm.kind) then
		-- a new session of the client: its version, player and frames
		-- start afresh, in a new conversation
		existing.joined = false
		convs[client] = nil
		existing = nil
	end
	-- A packet that may start a conversation gathers its evidence in a
	-- conversation of its own, kept if it turns out to be a game packet.
	local c = existing or new_conv()
	if server_port == LISTEN_PORT and nm.kind ~= KIND_HANDSHAKE and nm.kind ~= KIND_HANDSHAKE_REPLY then
		-- only a server with one socket for every client talks to its
		-- clients on its listening port
		learn_shared_socket(c)
	end
	local raw = buf:raw(0, len)
	local reported = buf:reported_length_remaining()
	local v, told, res = track_decode(raw, len, name, nm, c, measure, len < reported)
	if res.err and COMMON_WORD[name] and not existing and not servers[server] and server_port ~= LISTEN_PORT then
		return nil
	end
	if not existing then
		conv_count = conv_count + 1
		c.id, c.client = conv_count, client
		convs[client] = c
	end
	local kind, err = "game", res.err
	if len < reported then
		err = format("truncated by the capture's snap length: %d of %d payload bytes captured", len, reported)
	end
	if dir ~= named and not err then
		err = format("%s is sent %s; this one went %s", name, ARROW[named], ARROW[dir])
	end
	if err then
		kind = "malformed"
	end
	if told and kind == "game" and c.version ~= 0 then
		global_version = c.version
	end
	local shown = v
	if not told and c.version == 0 and global_version == 0 and not err then
		shown = 0 -- nothing in the packet or before it tells
	end
	learn(c, res, kind, server, dir)
	local player = c.player
	local l = res.layout
	local pl = l and res.v[l.player]
	if pl and kind == "game" then
		player = pl
	end
	if kind == "game" and l.piece and l.dif then
		reassemble(raw, res, client, c, number, pinfo.abs_ts, measure)
	end
	-- The conversation's last record of this packet name is most often
	-- the one this frame needs: no new table, no lookup in the shared ones.
	local era, versions = version_name(shown), c.versions
	local st = c.last[name]
	if not (st and st.kind == kind and st.era == era and st.layout == l and st.dir == dir and
		st.player == player and st.err == err and st.versions == versions) then
		st = intern({kind = kind, name = name, layout = l, era = era, dir = dir, player = player, err = err,
			versions = versions})
		c.last[name] = st
	end
	return st, res
end


-- has_tree tells whether Wireshark builds a tree for this dissection (to
-- show, print or filter fields): without one (tshark printing only the
-- summary lines) nothing is added to it and no dif is inflated. Wireshark
-- tells it only through the text of the tree item.
local function has_tree(tree)
	return not tostring(tree):find("has subtree=false", 1, true)
end

-- value as the field's type wants it: Int64 for 64-bit fields.
local function wire(pf, v)
	if INT64[pf] then
		return Int64.new(v)
	end
	return v
end

local function add_field(tree, buf, f, v)
	local r = buf(v.pos, v.n)
	if f.type == "data" or f.type == "rest" then
		tree:add(f.pf, r)
		tree:add(f.pf_len, v.n):set_generated()
		return
	end
	if f.type == "f64" or f.type == "str16" or f.type == "strn" then
		tree:add(f.pf, r, v.v)
		return
	end
	local m, differs = meant(f, v.v)
	if differs then
		local item = tree:add(f.pf, r, wire(f.pf, m))
		item:append_text(" (raw " .. int(v.v) .. ")")
		tree:add(f.pf_raw, r, wire(f.pf_raw, v.v))
		return
	end
	local item = tree:add(f.pf, r, wire(f.pf, v.v))
	local name = f.enum and f.enum[v.v]
	if name then
		item:append_text(" (" .. name .. ")")
		tree:add(f.pf_name, r, name):set_generated()
	end
	if f.bits and v.v ~= 0 then
		item:append_text(" [" .. bits_text(f.bits, v.v) .. "]")
	end
end

local function add_tree(tree, buf, res)
	local l = res.layout
	local entry = 1
	for i, f in ipairs(l.fields) do
		if res.v[i] == nil then
			break
		end
		local v = {v = res.v[i], pos = res.p[i], n = res.n[i]}
		if f.type == "group" then
			local g = tree:add(f.pf, buf(v.pos, v.n))
			g:append_text(": " .. int(v.v) .. " entries")
			for e = 0, v.v - 1 do
				local first = res.entries[entry]
				local sub = g:add(buf(first.pos, v.n / v.v), "#" .. int(e))
				for _, s in ipairs(f.sub) do
					local sv = res.entries[entry]
					sub:add(s.pf, buf(sv.pos, sv.n), wire(s.pf, sv.v))
					sub:append_text(" " .. s.name .. "=" .. int(sv.v))
					entry = entry + 1
				end
			end
		else
			add_field(tree, buf, f, v)
		end
	end
end

local function hex_prefix(buf, len, max)
	local n = len
	if n > max then
		n = max
	end
	local raw = buf(0, n):raw()
	local out = {}
	for i = 1, #raw do
		out[i] = string.format("%02x", raw:byte(i))
	end
	local s = table.concat(out)
	if len > max then
		s = s .. "…"
	end
	return s
end

-- The Info column's text, as pmdump read prints the packet.
local function info_text(buf, len, st, res)
	if st.kind == "unknown" then
		return st.name .. " [unknown packet, " .. int(len) .. " bytes] " .. hex_prefix(buf, len, 32)
	end
	local info = st.name
	local sum = summary(res)
	if sum ~= "" then
		info = info .. " " .. sum
	end
	if st.kind == "malformed" then
		info = info .. " [malformed: " .. st.err .. "]"
	end
	return info
end

local function dissect(buf, pinfo, tree)
	local len = buf:len()
	if len < 4 then
		return 0
	end
	local name = buf:raw(0, 4) -- no TvbRange: each Wireshark object costs its garbage collection
	local dir = DIR_OF[name]
	if not dir and not printable(name) then
		return 0 -- most other UDP ends here, before anything else is asked of Wireshark
	end
	local number = pinfo.number
	local st = frames[number]
	local res
	local full = has_tree(tree)
	if st == nil then
		if pinfo.visited then
			return 0 -- not seen in the first pass: not game traffic
		end
		st, res = first_pass(buf, len, name, dir, pinfo, number, full)
		frames[number] = st or false
	end
	if not st then
		return 0
	end
	-- The decoded fields are not kept: frames shown again are decoded
	-- again from their bytes.
	if st.kind ~= "unknown" and not res then
		if st.layout then
			res = decode(buf:raw(0, len), len, st.layout, full)
		else
			res = {v = {}, entries = NO_ENTRIES} -- of no known version: not decoded
		end
	end
	local cols = pinfo.cols
	cols.protocol = "PMNET"
	if not full then
		cols.info = info_text(buf, len, st, res)
		return len
	end
	local info = info_text(buf, len, st, res)
	local t = tree:add(pmnet, buf())
	t:add(PF["pmnet.type"], buf(0, 4), st.name)
	t:add(PF["pmnet.era"], st.era):set_generated()
	if st.versions and st.versions ~= 0 then
		t:add(PF["pmnet.versions"], set_range(st.versions)):set_generated()
	end
	t:add(PF["pmnet.dir"], st.dir):set_generated()
	if st.player >= 0 then
		t:add(PF["pmnet.player"], st.player):set_generated()
	end
	if st.kind == "unknown" then
		t:append_text(", " .. st.name .. " (unknown)")
		t:add_proto_expert_info(EX_UNKNOWN, "unknown packet name " .. quote(st.name))
	else
		local l = res.layout
		if l then
			t:append_text(", " .. st.name .. " (" .. st.era .. "): " .. l.doc)
			add_tree(t, buf, res)
		else
			t:append_text(", " .. st.name .. " (of no known version)")
		end
		if st.kind == "malformed" then
			t:add_proto_expert_info(EX_MALFORMED, st.err)
		end
		local n = pinfo.number
		if dif_compressed[n] then
			t:add(PF["pmnet.dif.compressed"], dif_compressed[n]):set_generated()
			t:add(PF["pmnet.dif.pieces"], dif_pieces[n]):set_generated()
			if dif_inflated[n] then
				t:add(PF["pmnet.dif.inflated"], dif_inflated[n]):set_generated()
			end
		end
	end
	cols.info = info
	return len
end

local function dissector(buf, pinfo, tree)
	local ok, n = pcall(dissect, buf, pinfo, tree)
	if not ok then
		local t = tree:add(pmnet, buf())
		t:add_proto_expert_info(EX_MALFORMED, "dissector error: " .. tostring(n))
		return buf:len()
	end
	return n
end
pmnet.dissector = dissector

local function heuristic(buf, pinfo, tree)
	return dissector(buf, pinfo, tree) > 0
end

pmnet:register_heuristic("udp", heuristic)
DissectorTable.get("udp.port"):add(LISTEN_PORT, pmnet)

local function init()
	convs, servers, global_version, frames, conv_count, shared = {}, {}, 0, {}, 0, {}
	dif_compressed, dif_pieces, dif_inflated = {}, {}, {}
	asm = {msgs = {}, clients = {}, total = 0, order = {}}
end
pmnet.init = init
