// Command informerbench is the client-go contender of benchmarks/informer_throughput.py: a
// SharedIndexInformer for pods in one namespace of the stub API server, timed as the Python
// contenders are (list-sync objects/s, watch events/s, RSS per cached pod, process CPU).
//
// It is built against the Kubernetes snapshot's vendored client-go by
// benchmarks/clientgo/build.sh, and prints one JSON line.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func rss() float64 {
	runtime.GC()
	debug.FreeOSMemory()
	var pages, resident int64
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0
	}
	defer f.Close()
	fmt.Fscan(f, &pages, &resident)
	return float64(resident * int64(os.Getpagesize()))
}

func cpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func main() {
	url := flag.String("url", "", "stub server URL")
	pods := flag.Int("pods", 0, "pods expected")
	events := flag.Int("events", 0, "MODIFIED events expected")
	flag.Parse()
	ns := fmt.Sprintf("bench-%d-%d", *pods, *events)
	// No client-side throttle, as the Python contenders.
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: *url, QPS: -1})
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	informer := factory.Core().V1().Pods().Informer()
	updates := 0
	done := make(chan struct{})
	informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {},
		UpdateFunc: func(old, new interface{}) {
			_ = new.(*v1.Pod)
			updates++
			if updates == *events {
				close(done)
			}
		},
	})
	base := rss()
	stop := make(chan struct{})
	t0, c0 := time.Now(), cpu()
	factory.Start(stop)
	cache.WaitForCacheSync(stop, informer.HasSynced)
	t1, c1 := time.Now(), cpu()
	<-done
	t2, c2 := time.Now(), cpu()
	cached := len(informer.GetStore().ListKeys())
	if cached != *pods {
		fmt.Fprintf(os.Stderr, "cache holds %d objects, expected %d\n", cached, *pods)
		os.Exit(1)
	}
	mem := rss() - base
	listS, watchS := t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
	out, _ := json.Marshal(map[string]float64{
		"pods":             float64(*pods),
		"events":           float64(*events),
		"list_s":           listS,
		"watch_s":          watchS,
		"objects_per_s":    float64(*pods) / listS,
		"events_per_s":     float64(*events) / watchS,
		"bytes_per_object": mem / float64(*pods),
		"list_cpu_s":       c1 - c0,
		"watch_cpu_s":      c2 - c1,
	})
	fmt.Println(string(out))
	os.Exit(0)
}
