package arrays_test

import (
	"bytes"
	"fmt"

	"github.com/ssmlab/ssmlab/sessions/arrays"
)

func ExampleEncodeNPY() {
	a, _ := arrays.FromRows([][]float64{{1, 2, 3}, {4, 5, 6}})
	b, _ := arrays.EncodeNPY(a, arrays.Float32) // what numpy.save writes for a float32 array
	back, _ := arrays.DecodeNPY(b)
	fmt.Println(len(b), back.Shape, back.Data)
	// Output:
	// 152 [2 3] [1 2 3 4 5 6]
}

func ExampleOpenSafetensors() {
	ab, _ := arrays.FromRows([][]float64{{-0.5}, {1}})
	file, _ := arrays.EncodeSafetensors([]arrays.Named{
		{Name: "filter.ab", Array: ab},
		{Name: "filter.h_0", Array: arrays.Vector([]float64{0.25})},
	}, arrays.SafetensorsOptions{DType: arrays.Float32, Metadata: map[string]string{"format": "pt"}})

	st, err := arrays.OpenSafetensors(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		panic(err)
	}
	for _, in := range st.Arrays() {
		a, _ := st.Read(in.Name)
		fmt.Println(in.Name, in.DType, arrays.ShapeString(in.Shape), a.Data)
	}
	// Output:
	// filter.ab float32 (2, 1) [-0.5 1]
	// filter.h_0 float32 (1,) [0.25]
}

func ExamplePack() {
	a := arrays.Vector([]float64{1, 0.5})
	p := arrays.Pack(a)
	fmt.Println(p.DType, p.Shape, p.Data)
	// Output:
	// <f8 [2] AAAAAAAA8D8AAAAAAADgPw==
}
