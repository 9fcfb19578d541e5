package captures

// The sample captures and their ground truth are made by pmdump itself; run
// "go generate ./captures" after changing the generator.

//go:generate go run github.com/pmdump/pmdump/cmd/pmdump synth -o legacy.pcap --players 2 --duration 6s --era legacy --seed 1
//go:generate go run github.com/pmdump/pmdump/cmd/pmdump synth -o modern.pcapng --players 2 --duration 5s --era modern --loss 0.02 --seed 1
//go:generate go run github.com/pmdump/pmdump/cmd/pmdump synth -o 2026-07.pcapng --players 2 --duration 5s --era 2026-07 --loss 0.02 --seed 1
