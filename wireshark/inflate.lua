-- Bounded inflate, run before the runtime: only arithmetic that means the
-- same in Lua 5.2 and 5.4 (no integer division or bitwise operators).
local floor = math.floor

-- Bounded inflate. A dif is measured by walking its zlib stream (RFC 1950,
-- 1951) in Lua without writing the output: the walk counts what the stream
-- inflates to and stops as soon as that passes MAX_STATE, the largest state
-- pmdump rebuilds, so a zip bomb costs no more than a state does. Only a
-- stream that stays within the bound is then inflated by Wireshark, which
-- also checks its Adler-32.
local INF_LEN_BASE = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
	131, 163, 195, 227, 258}
local INF_LEN_EXTRA = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
local INF_DIST_BASE = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
	2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
local INF_DIST_EXTRA = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
	13, 13}
local INF_CL_ORDER = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
local INF_FAST, INF_FAST_N = 9, 512
local POW2 = {}
for i = 0, 40 do
	POW2[i] = 2 ^ i
end

-- A canonical Huffman code from code lengths (lens[0..n-1]): counts per
-- length and the symbols in code order; nil when over-subscribed, or
-- incomplete other than a single one-bit code (as Go's flate allows).
local function inf_code(lens, n)
	local count = {}
	for l = 0, 15 do
		count[l] = 0
	end
	for s = 0, n - 1 do
		count[lens[s]] = count[lens[s]] + 1
	end
	local left, max = 1, 0
	for l = 1, 15 do
		left = left * 2 - count[l]
		if left < 0 then
			return nil
		end
		if count[l] > 0 then
			max = l
		end
	end
	if left > 0 and not (max == 1 and count[1] == 1) and max > 0 then
		return nil
	end
	local offs, sym = {}, {}
	offs[1] = 0
	for l = 1, 14 do
		offs[l + 1] = offs[l] + count[l]
	end
	for s = 0, n - 1 do
		local l = lens[s]
		if l ~= 0 then
			sym[offs[l]] = s
			offs[l] = offs[l] + 1
		end
	end
	-- A table of the codes up to INF_FAST bits, indexed by the next
	-- INF_FAST bits of the stream (first bit lowest): symbol and length.
	local fsym, flen = {}, {}
	local code, idx = 0, 0
	for l = 1, INF_FAST do
		for _ = 1, count[l] do
			local r, c = 0, code
			for _ = 1, l do
				local b = c % 2
				r = r * 2 + b
				c = (c - b) / 2
			end
			local s = sym[idx]
			for v = r, INF_FAST_N - 1, 2 ^ l do
				fsym[v], flen[v] = s, l
			end
			idx = idx + 1
			code = code + 1
		end
		code = code * 2
	end
	return {count = count, sym = sym, fsym = fsym, flen = flen}
end

local INF_FIXED_LEN, INF_FIXED_DIST
do
	local lens = {}
	for s = 0, 287 do
		if s < 144 then
			lens[s] = 8
		elseif s < 256 then
			lens[s] = 9
		elseif s < 280 then
			lens[s] = 7
		else
			lens[s] = 8
		end
	end
	INF_FIXED_LEN = inf_code(lens, 288)
	-- all 32 five-bit codes (30 and 31 are invalid distances)
	local d = {}
	for s = 0, 31 do
		d[s] = 5
	end
	INF_FIXED_DIST = inf_code(d, 32)
end

-- deflate_size returns the size a zlib stream inflates to, or nil and why
-- when it is not a well-formed stream or inflates past limit.
local function deflate_size(z, limit)
	local n = #z
	local pos = 1 -- next byte of z
	local bitbuf, bitcnt = 0, 0
	local function bits(k)
		while bitcnt < k do
			if pos > n then
				error("stream cut short", 0)
			end
			bitbuf = bitbuf + z:byte(pos) * POW2[bitcnt]
			pos = pos + 1
			bitcnt = bitcnt + 8
		end
		local p = POW2[k]
		local v = bitbuf % p
		bitbuf = (bitbuf - v) / p
		bitcnt = bitcnt - k
		return v
	end
	-- to the next byte boundary: the whole bytes read ahead go back.
	local function align()
		pos = pos - floor(bitcnt / 8)
		bitbuf, bitcnt = 0, 0
	end
	local function decode(h)
		while bitcnt < 16 and pos <= n do
			bitbuf = bitbuf + z:byte(pos) * POW2[bitcnt]
			pos = pos + 1
			bitcnt = bitcnt + 8
		end
		local v = bitbuf % INF_FAST_N
		local l = h.flen[v]
		if l and l <= bitcnt then
			local p = POW2[l]
			bitbuf = (bitbuf - bitbuf % p) / p
			bitcnt = bitcnt - l
			return h.fsym[v]
		end
		local code, first, index = 0, 0, 0
		local count = h.count
		for l = 1, 15 do
			if bitcnt == 0 then
				if pos > n then
					error("stream cut short", 0)
				end
				bitbuf = z:byte(pos)
				pos = pos + 1
				bitcnt = 8
			end
			local b = bitbuf % 2
			bitbuf = (bitbuf - b) / 2
			bitcnt = bitcnt - 1
			code = code + b
			local c = count[l]
			if code - c < first then
				return h.sym[index + code - first]
			end
			index = index + c
			first = (first + c) * 2
			code = code * 2
		end
		error("invalid Huffman code", 0)
	end
	local function walk()
		if n < 2 then
			error("no zlib header", 0)
		end
		local cmf, flg = z:byte(1, 2)
		if cmf % 16 ~= 8 or cmf >= 128 or (cmf * 256 + flg) % 31 ~= 0 or floor(flg / 32) % 2 == 1 then
			error("bad zlib header", 0)
		end
		pos = 3
		local out = 0
		repeat
			local last = bits(1)
			local kind = bits(2)
			if kind == 0 then
				align()
				if pos + 3 > n then
					error("stream cut short", 0)
				end
				local a, b, c, d = z:byte(pos, pos + 3)
				local len = a + b * 256
				if len + c + d * 256 ~= 65535 then
					error("stored block length does not match its complement", 0)
				end
				pos = pos + 4 + len
				if pos > n + 1 then
					error("stream cut short", 0)
				end
				out = out + len
			elseif kind == 3 then
				error("invalid block type", 0)
			else
				local lencode, distcode = INF_FIXED_LEN, INF_FIXED_DIST
				if kind == 2 then
					local nlen, ndist, ncode = bits(5) + 257, bits(5) + 1, bits(4) + 4
					if nlen > 286 or ndist > 30 then
						error("bad code counts", 0)
					end
					local lens = {}
					for i = 0, 18 do
						lens[i] = 0
					end
					for i = 1, ncode do
						lens[INF_CL_ORDER[i]] = bits(3)
					end
					local cl = inf_code(lens, 19)
					if not cl then
						error("bad code lengths code", 0)
					end
					lens = {}
					local i = 0
					while i < nlen + ndist do
						local sym = decode(cl)
						if sym < 16 then
							lens[i] = sym
							i = i + 1
						else
							local v, rep = 0, 0
							if sym == 16 then
								if i == 0 then
									error("repeat with no first length", 0)
								end
								v, rep = lens[i - 1], 3 + bits(2)
							elseif sym == 17 then
								rep = 3 + bits(3)
							else
								rep = 11 + bits(7)
							end
							if i + rep > nlen + ndist then
								error("too many lengths", 0)
							end
							for _ = 1, rep do
								lens[i] = v
								i = i + 1
							end
						end
					end
					if lens[256] == 0 then
						error("no end-of-block code", 0)
					end
					local ll, dl = {}, {}
					for s = 0, nlen - 1 do
						ll[s] = lens[s]
					end
					for s = 0, ndist - 1 do
						dl[s] = lens[nlen + s]
					end
					lencode, distcode = inf_code(ll, nlen), inf_code(dl, ndist)
					if not lencode or not distcode then
						error("bad literal/length or distance code", 0)
					end
				end
				while true do
					local sym = decode(lencode)
					if sym < 256 then
						out = out + 1
					elseif sym == 256 then
						break
					else
						sym = sym - 256
						if sym > 29 then
							error("bad length symbol", 0)
						end
						local len = INF_LEN_BASE[sym] + bits(INF_LEN_EXTRA[sym])
						local ds = decode(distcode)
						if ds > 29 then
							error("bad distance symbol", 0)
						end
						local dist = INF_DIST_BASE[ds + 1] + bits(INF_DIST_EXTRA[ds + 1])
						if dist > out then
							error("distance too far back", 0)
						end
						out = out + len
					end
					if out > limit then
						error(string.format("inflates past %d bytes", limit), 0)
					end
				end
			end
			if out > limit then
				error(string.format("inflates past %d bytes", limit), 0)
			end
		until last == 1
		align()
		if pos + 3 > n then
			error("Adler-32 checksum missing", 0)
		end
		return out
	end
	local ok, res = pcall(walk)
	if ok then
		return res
	end
	return nil, res
end

